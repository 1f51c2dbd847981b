// Package jsonscan is the one hand-written JSON reader of attune: `attune
// mcp` reads its messages and a tools/call's arguments with it into Go
// values (Decode, Members), and luabind reads owner logs straight into
// Lua values on its primitives (Scanner). It accepts exactly what
// encoding/json accepts and reads what encoding/json reads: invalid UTF-8
// and a lone surrogate in a string become U+FFFD, numbers are float64.
//
// Why hand-written, and not jsontext (github.com/go-json-experiment/json):
// measured in one build, five runs of 100000 calls each, as the CPU time the
// process used per call (cpu-ns/op: the machine, 2 cores, was shared, and
// wall time swung 3x), median (min):
//
//	workload (compare/compare_test.go)              jsonscan      jsontext Decoder
//	scan a tools/call message: id, method, params   1112 (629)    2070 (1377)   1.9x
//	an owner-log entry into Lua values (luabind)    4614 (3477)   5064 (4496)   1.1x
//	a tools/call's params into Go values            5292 (4785)   6507 (4595)   1.2x, within noise
//
// The message scan, which every message of attune mcp takes, is where the
// hand-written reader wins: it slices the members it wants out of the
// text and only checks the rest, where jsontext's state machine reads
// every token and copies each name it unquotes. Building values costs the
// same either way (the maps and strings dominate). So the scanner stays,
// one of it (the proxy's and luabind's were two), and attune takes no new
// dependency for it. It also says what jsontext does not: whether a text
// says exactly what its value says (Result.Lossy: a number float64 cannot
// hold exactly, a byte read as U+FFFD), which decides whether attune mcp
// may send the client's text on. Both refuse duplicate names (DupError
// here, by default there). Run `cd internal/jsonscan/compare && go test
// -bench .` again (a module of its own: attune does not depend on
// go-json-experiment). The scanner is held to encoding/json by fuzzing
// (FuzzDecode in luabind, the mcpproxy fuzzers, FuzzDecodeAsEncodingJSON
// here).
package jsonscan

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Scanner reads JSON from Data at Pos. Its methods read one piece each
// (white space, a literal, a number, a string, a separator) and leave Pos
// after it, or at the byte that is wrong when they fail.
type Scanner struct {
	Data []byte
	Pos  int
}

// WS skips white space.
func (s *Scanner) WS() {
	for s.Pos < len(s.Data) {
		switch s.Data[s.Pos] {
		case ' ', '\t', '\n', '\r':
			s.Pos++
		default:
			return
		}
	}
}

// Peek is the byte at Pos; 0 at the end.
func (s *Scanner) Peek() byte {
	if s.Pos < len(s.Data) {
		return s.Data[s.Pos]
	}
	return 0
}

// Eat reads c when it is the byte at Pos.
func (s *Scanner) Eat(c byte) bool {
	if s.Pos < len(s.Data) && s.Data[s.Pos] == c {
		s.Pos++
		return true
	}
	return false
}

// Literal reads word (true, false, null) at Pos.
func (s *Scanner) Literal(word string) bool {
	if len(s.Data)-s.Pos < len(word) || string(s.Data[s.Pos:s.Pos+len(word)]) != word {
		return false
	}
	s.Pos += len(word)
	return true
}

// Sep reads what follows an object's member or an array's item after white
// space: a comma (more to come) or closing (done); anything else is not
// JSON (!ok).
func (s *Scanner) Sep(closing byte) (done, ok bool) {
	s.WS()
	if s.Pos >= len(s.Data) {
		return false, false
	}
	switch s.Data[s.Pos] {
	case ',':
		s.Pos++
		return false, true
	case closing:
		s.Pos++
		return true, true
	}
	return false, false
}

// Number reads a number by JSON's grammar,
// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?, and returns its
// text; integer reports that it has neither fraction nor exponent.
func (s *Scanner) Number() (tok []byte, integer, ok bool) {
	start := s.Pos
	s.Eat('-')
	switch {
	case s.Eat('0'):
	case s.Pos < len(s.Data) && s.Data[s.Pos] >= '1' && s.Data[s.Pos] <= '9':
		s.digits()
	default:
		return nil, false, false
	}
	integer = true
	if s.Eat('.') {
		integer = false
		if !s.digits() {
			return nil, false, false
		}
	}
	if s.Eat('e') || s.Eat('E') {
		integer = false
		if !s.Eat('+') {
			s.Eat('-')
		}
		if !s.digits() {
			return nil, false, false
		}
	}
	return s.Data[start:s.Pos], integer, true
}

func (s *Scanner) digits() bool {
	n := s.Pos
	for s.Pos < len(s.Data) && s.Data[s.Pos] >= '0' && s.Data[s.Pos] <= '9' {
		s.Pos++
	}
	return s.Pos > n
}

// StrErr says why a string does not read.
type StrErr uint8

const (
	StrOK        StrErr = iota
	StrNotString        // no opening quote
	StrControl          // a control character (below 0x20) inside
	StrEscape           // an escape JSON does not have
	StrUnicode          // a \u without four hex digits
	StrUnterminated
)

// String reads a string at Pos (its opening quote) and returns its body,
// between the quotes. plain reports that the body is its text (no escape,
// valid UTF-8): string(body); else Unquote(body) is its text.
func (s *Scanner) String() (body []byte, plain bool, why StrErr) {
	if !s.Eat('"') {
		return nil, false, StrNotString
	}
	start := s.Pos
	escaped, ascii := false, true
	for s.Pos < len(s.Data) {
		c := s.Data[s.Pos]
		switch {
		case c == '"':
			body = s.Data[start:s.Pos]
			s.Pos++
			if escaped {
				if at, why := checkEscapes(body); why != StrOK {
					s.Pos = start + at
					return nil, false, why
				}
				return body, false, StrOK
			}
			return body, ascii || utf8.Valid(body), StrOK
		case c == '\\':
			escaped = true
			s.Pos += 2 // the escaped byte is never the closing quote
		case c < 0x20:
			return nil, false, StrControl
		default:
			if c >= utf8.RuneSelf {
				ascii = false
			}
			s.Pos++
		}
	}
	s.Pos = len(s.Data)
	return nil, false, StrUnterminated
}

// checkEscapes finds the first escape in a string's body that JSON does
// not have: its offset, and why.
func checkEscapes(b []byte) (int, StrErr) {
	for k := 0; k < len(b); k++ {
		if b[k] != '\\' {
			continue
		}
		if k+1 >= len(b) {
			return k, StrUnterminated
		}
		switch b[k+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			k++
		case 'u':
			if k+5 >= len(b) {
				return k + 2, StrUnicode
			}
			for _, h := range b[k+2 : k+6] {
				if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
					return k + 2, StrUnicode
				}
			}
			k += 5
		default:
			return k + 2, StrEscape
		}
	}
	return 0, StrOK
}

// Unquote is the text of a string's body that String returned not plain,
// as encoding/json reads it: each byte that is not UTF-8, and each \u
// escape of half a surrogate pair alone, is U+FFFD. lossy reports that
// such a replacement was made (the text does not say what was sent).
func Unquote(s []byte) (text string, lossy bool) {
	b := make([]byte, 0, len(s))
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			e := s[r+1]
			if e == 'u' {
				rr := hex4(s[r+2 : r+6])
				r += 6
				if utf16.IsSurrogate(rr) {
					if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(s[r+2:r+6])); dec != unicode.ReplacementChar {
							b = utf8.AppendRune(b, dec)
							r += 6
							continue
						}
					}
					rr, lossy = unicode.ReplacementChar, true
				}
				b = utf8.AppendRune(b, rr)
				continue
			}
			switch e {
			case 'b':
				e = '\b'
			case 'f':
				e = '\f'
			case 'n':
				e = '\n'
			case 'r':
				e = '\r'
			case 't':
				e = '\t'
			}
			b = append(b, e)
			r += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			if rr == utf8.RuneError && size == 1 {
				lossy = true
			}
			b = utf8.AppendRune(b, rr)
			r += size
		}
	}
	return string(b), lossy
}

// hex4 is the value of four hex digits (checkEscapes checked them).
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
