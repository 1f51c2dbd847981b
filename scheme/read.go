package scheme

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxDepth bounds how deeply lists (and quotes) may nest.
const maxDepth = 500

// Read parses src, the text of the file named file, into its top-level forms.
// Every form carries its position. The first error stops reading; it is an
// *Error positioned where the problem starts: an unclosed list at its '(', a
// stray ')' at itself, an unterminated string at its opening quote, a bad
// escape at its backslash. Read is safe for concurrent use.
func Read(file string, src []byte) ([]*Form, error) {
	r := &reader{file: file, src: src, line: 1, col: 1}
	var forms []*Form
	for {
		r.skipSpace()
		if r.eof() {
			return forms, nil
		}
		f, err := r.form()
		if err != nil {
			return nil, err
		}
		forms = append(forms, f)
	}
}

type reader struct {
	file      string
	src       []byte
	off       int // byte offset of the next character
	line, col int // position of the next character
	depth     int
}

func (r *reader) eof() bool { return r.off >= len(r.src) }

func (r *reader) pos() Pos { return Pos{File: r.file, Line: r.line, Col: r.col} }

func (r *reader) errorf(p Pos, format string, args ...any) error {
	return &Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

// peek returns the next character and its width in bytes; an invalid UTF-8
// byte comes back as utf8.RuneError with width 1.
func (r *reader) peek() (rune, int) {
	if r.eof() {
		return -1, 0
	}
	c := r.src[r.off]
	if c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRune(r.src[r.off:])
}

// next consumes one character.
func (r *reader) next() rune {
	c, w := r.peek()
	r.off += w
	if c == '\n' {
		r.line++
		r.col = 1
	} else {
		r.col++
	}
	return c
}

// skipSpace skips whitespace and ; comments. Comments may hold any bytes.
func (r *reader) skipSpace() {
	for !r.eof() {
		switch c := r.src[r.off]; c {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			r.next()
		case ';':
			for !r.eof() && r.src[r.off] != '\n' {
				r.off++
			}
		default:
			return
		}
	}
}

// isDelimiter reports whether c ends a symbol, number, keyword or # token.
func isDelimiter(c rune) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '\v', '(', ')', '"', ';', '\'', '`', ',', '[', ']', '{', '}':
		return true
	}
	return false
}

func (r *reader) form() (*Form, error) {
	p := r.pos()
	c, w := r.peek()
	if c == utf8.RuneError && w == 1 {
		return nil, r.errorf(p, "invalid UTF-8 byte 0x%02x; save the file as UTF-8", r.src[r.off])
	}
	switch c {
	case '(':
		return r.list()
	case ')':
		return nil, r.errorf(p, "unexpected ')': it closes no list; remove it or add the '(' it belongs to")
	case '"':
		return r.str()
	case '\'':
		return r.quote()
	case '#':
		return r.hash()
	case '`', ',':
		return nil, r.errorf(p, "unexpected %q: quasiquote and unquote are not supported; build the value with (list ...)", c)
	case '[', ']', '{', '}':
		return nil, r.errorf(p, "unexpected %q: lists are written with ( and )", c)
	}
	return r.atom()
}

func (r *reader) enter(p Pos) error {
	r.depth++
	if r.depth > maxDepth {
		return r.errorf(p, "forms nest more than %d deep; split this expression into smaller definitions", maxDepth)
	}
	return nil
}

func (r *reader) list() (*Form, error) {
	p := r.pos()
	if err := r.enter(p); err != nil {
		return nil, err
	}
	defer func() { r.depth-- }()
	r.next() // (
	f := &Form{Pos: p, Kind: List, Items: []*Form{}}
	for {
		r.skipSpace()
		if r.eof() {
			return nil, r.errorf(p, "unclosed list: add a ')' to close the '(' opened here")
		}
		if r.src[r.off] == ')' {
			r.next()
			return f, nil
		}
		it, err := r.form()
		if err != nil {
			return nil, err
		}
		f.Items = append(f.Items, it)
	}
}

func (r *reader) quote() (*Form, error) {
	p := r.pos()
	if err := r.enter(p); err != nil {
		return nil, err
	}
	defer func() { r.depth-- }()
	r.next() // '
	r.skipSpace()
	if r.eof() || r.src[r.off] == ')' {
		return nil, r.errorf(p, "a quote ' must be followed by a form, as in 'name or '(a b)")
	}
	x, err := r.form()
	if err != nil {
		return nil, err
	}
	q := &Form{Pos: p, Kind: Symbol, Text: "quote"}
	return &Form{Pos: p, Kind: List, Items: []*Form{q, x}}, nil
}

func (r *reader) str() (*Form, error) {
	p := r.pos()
	r.next() // "
	var b strings.Builder
	for {
		if r.eof() {
			return nil, r.errorf(p, "unterminated string: add a closing '\"' to the string opened here")
		}
		ep := r.pos()
		c, w := r.peek()
		if c == utf8.RuneError && w == 1 {
			return nil, r.errorf(ep, "invalid UTF-8 byte 0x%02x in string; save the file as UTF-8 or write the character as \\xHEX;", r.src[r.off])
		}
		r.next()
		switch c {
		case '"':
			return &Form{Pos: p, Kind: String, Text: b.String()}, nil
		case '\\':
			if err := r.escape(ep, &b); err != nil {
				return nil, err
			}
		default:
			b.WriteRune(c)
		}
	}
}

// escape reads the rest of an escape whose backslash is at p.
func (r *reader) escape(p Pos, b *strings.Builder) error {
	if r.eof() {
		return r.errorf(p, "unterminated string: a '\\' at the end of the file escapes nothing")
	}
	c := r.next()
	switch c {
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'r':
		b.WriteByte('\r')
	case '"':
		b.WriteByte('"')
	case '\\':
		b.WriteByte('\\')
	case 'a':
		b.WriteByte('\a')
	case 'b':
		b.WriteByte('\b')
	case '0':
		b.WriteByte(0)
	case 'x':
		start := r.off
		for !r.eof() && isHex(r.src[r.off]) {
			r.next()
		}
		digits := string(r.src[start:r.off])
		if digits == "" || r.eof() || r.src[r.off] != ';' {
			return r.errorf(p, "bad \\x escape: write \\x, hex digits and ';', as in \\x41; for A")
		}
		r.next() // ;
		v, err := strconv.ParseUint(digits, 16, 32)
		if err != nil || v > utf8.MaxRune || (v >= 0xD800 && v <= 0xDFFF) {
			return r.errorf(p, "bad \\x escape: \\x%s; is not a Unicode character", digits)
		}
		b.WriteRune(rune(v))
	case ' ', '\t', '\r', '\n':
		// A backslash at the end of a line joins the lines: it drops the line
		// break and the indentation around it.
		for c == ' ' || c == '\t' || c == '\r' {
			if r.eof() {
				return nil
			}
			c = r.next()
		}
		if c != '\n' {
			return r.errorf(p, "unknown escape '\\ ': to continue a string on the next line, end the line with '\\'")
		}
		for !r.eof() && (r.src[r.off] == ' ' || r.src[r.off] == '\t') {
			r.next()
		}
	default:
		if c == utf8.RuneError {
			return r.errorf(p, "unknown escape in string; write \\\\ for a backslash")
		}
		return r.errorf(p, "unknown escape '\\%c' in string; use one of \\n \\t \\r \\\" \\\\ \\a \\b \\0 \\xHEX; or write \\\\ for a backslash", c)
	}
	return nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// token reads characters up to the next delimiter.
func (r *reader) token() (string, error) {
	start := r.off
	for !r.eof() {
		p := r.pos()
		c, w := r.peek()
		if c == utf8.RuneError && w == 1 {
			return "", r.errorf(p, "invalid UTF-8 byte 0x%02x; save the file as UTF-8", r.src[r.off])
		}
		if isDelimiter(c) {
			break
		}
		r.next()
	}
	return string(r.src[start:r.off]), nil
}

func (r *reader) hash() (*Form, error) {
	p := r.pos()
	tok, err := r.token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case "#t", "#true":
		return &Form{Pos: p, Kind: Bool, Bool: true}, nil
	case "#f", "#false":
		return &Form{Pos: p, Kind: Bool, Bool: false}, nil
	}
	return nil, r.errorf(p, "bad # syntax %q: only #t (true) and #f (false) are supported", tok)
}

func (r *reader) atom() (*Form, error) {
	p := r.pos()
	tok, err := r.token()
	if err != nil {
		return nil, err
	}
	if looksNumeric(tok) {
		if !isNumber(tok) {
			return nil, r.errorf(p, "bad number %q: write digits with an optional sign, fraction and exponent, as in -12, 3.5 or 1e6", tok)
		}
		v, err := strconv.ParseFloat(tok, 64)
		if err != nil || math.IsInf(v, 0) {
			return nil, r.errorf(p, "number %s is out of range", tok)
		}
		return &Form{Pos: p, Kind: Number, Text: tok, Num: v}, nil
	}
	if tok[0] == ':' {
		if len(tok) == 1 {
			return nil, r.errorf(p, "':' must be followed by a name, as in :key")
		}
		return &Form{Pos: p, Kind: Keyword, Text: tok[1:]}, nil
	}
	return &Form{Pos: p, Kind: Symbol, Text: tok}, nil
}

// looksNumeric reports whether tok starts like a number: a digit, or a sign
// or a point followed by a digit.
func looksNumeric(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
	}
	return i < len(s) && s[i] >= '0' && s[i] <= '9'
}

// isNumber reports whether s is [+-](digits[.digits]|.digits)[(e|E)[+-]digits].
func isNumber(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	n := digits()
	if i < len(s) && s[i] == '.' {
		i++
		n += digits()
	}
	if n == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
