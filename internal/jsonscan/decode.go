package jsonscan

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// MaxDepth is encoding/json's nesting limit: Decode leaves deeper texts to
// it (ErrNotHandled).
const MaxDepth = 10000

// ErrNotHandled: Decode leaves the text to encoding/json (it is not JSON,
// or has what the scanner does not read itself: a number float64 cannot
// hold, a nesting deeper than MaxDepth). encoding/json then gives its own
// result or error.
var ErrNotHandled = errors.New("jsonscan: not read here: ask encoding/json")

// DupError is an object that names a member twice (its name as read,
// escapes undone: "a" and "\u0061" are one name). Readers disagree on
// which of the two counts (encoding/json and Lua the last, others the
// first), so a text that has one is refused where the difference matters.
type DupError struct {
	Name string
	At   int // the byte offset of the second
}

func (e *DupError) Error() string {
	return fmt.Sprintf("the object at byte %d names member %q twice", e.At, e.Name)
}

// Options of Decode.
type Options struct {
	// Dups refuses an object that names a member twice (*DupError); else
	// the last counts, as with encoding/json.
	Dups bool
}

// Result says what Decode saw besides the value.
type Result struct {
	// Lossy: a string had a byte that is not UTF-8 or a lone surrogate
	// (read as U+FFFD), or a number is not written as encoding/json
	// writes the float64 it reads as (1.0, 1e2, 2^53+1): the text and
	// the value's encoding differ.
	Lossy bool
}

type decoder struct {
	Scanner
	o     Options
	depth int
	lossy bool
	dup   *DupError
}

// Decode reads data as json.Unmarshal into an `any` does.
func Decode(data []byte, o Options) (any, Result, error) {
	d := decoder{Scanner: Scanner{Data: data}, o: o}
	v, ok := d.value(true)
	if d.dup != nil {
		return nil, Result{}, d.dup
	}
	if !ok {
		return nil, Result{}, ErrNotHandled
	}
	d.WS()
	if d.Pos != len(d.Data) {
		return nil, Result{}, ErrNotHandled
	}
	return v, Result{Lossy: d.lossy}, nil
}

// Valid reports whether data is one JSON value (with white space around),
// as json.Valid; false may also mean "ask json.Valid". With o.Dups, a
// *DupError is returned for a name given twice.
func Valid(data []byte, o Options) (bool, error) {
	d := decoder{Scanner: Scanner{Data: data}, o: o}
	_, ok := d.value(false)
	if d.dup != nil {
		return false, d.dup
	}
	d.WS()
	return ok && d.Pos == len(d.Data), nil
}

// value reads one value after white space; build false only checks it.
func (d *decoder) value(build bool) (any, bool) {
	d.WS()
	switch c := d.Peek(); {
	case c == '{':
		return d.object(build)
	case c == '[':
		return d.array(build)
	case c == '"':
		body, plain, why := d.String()
		if why != StrOK {
			return nil, false
		}
		if !build {
			return nil, true
		}
		if plain {
			return string(body), true
		}
		text, lossy := Unquote(body)
		d.lossy = d.lossy || lossy
		return text, true
	case c == 't':
		return true, d.Literal("true")
	case c == 'f':
		return false, d.Literal("false")
	case c == 'n':
		return nil, d.Literal("null")
	case c == '-' || c >= '0' && c <= '9':
		tok, integer, ok := d.Number()
		if !ok || !build {
			return nil, ok
		}
		f, exact, ok := Float(tok, integer)
		d.lossy = d.lossy || !exact
		return f, ok
	}
	return nil, false
}

// key reads a member's name: its text (when building or when it has
// escapes) and its bytes (the body, or the text's).
func (d *decoder) key(build bool) (string, []byte, bool) {
	if d.Peek() != '"' {
		return "", nil, false
	}
	body, plain, why := d.String()
	if why != StrOK {
		return "", nil, false
	}
	if plain {
		if build {
			return string(body), body, true
		}
		return "", body, true
	}
	text, lossy := Unquote(body)
	d.lossy = d.lossy || lossy
	return text, []byte(text), true
}

func (d *decoder) object(build bool) (any, bool) {
	if !build && d.o.Dups {
		return nil, d.checkObject()
	}
	if d.depth++; d.depth > MaxDepth {
		return nil, false
	}
	defer func() { d.depth-- }()
	d.Pos++ // {
	var m map[string]any
	if build {
		m = map[string]any{}
	}
	d.WS()
	if d.Eat('}') {
		return m, true
	}
	for {
		d.WS()
		at := d.Pos
		key, _, ok := d.key(build)
		if !ok {
			return nil, false
		}
		d.WS()
		if !d.Eat(':') {
			return nil, false
		}
		v, ok := d.value(build)
		if !ok {
			return nil, false
		}
		if build {
			n := len(m)
			m[key] = v
			if d.o.Dups && len(m) == n { // the name was there: no new member
				d.dup = &DupError{Name: key, At: at}
				return nil, false
			}
		}
		if done, ok := d.Sep('}'); !ok {
			return nil, false
		} else if done {
			return m, true
		}
	}
}

// checkObject checks an object, refusing a name given twice.
func (d *decoder) checkObject() bool {
	if d.depth++; d.depth > MaxDepth {
		return false
	}
	defer func() { d.depth-- }()
	d.Pos++ // {
	var seen names
	d.WS()
	if d.Eat('}') {
		return true
	}
	for {
		d.WS()
		at := d.Pos
		_, name, ok := d.key(false)
		if !ok {
			return false
		}
		if seen.add(name) {
			d.dup = &DupError{Name: string(name), At: at}
			return false
		}
		d.WS()
		if !d.Eat(':') {
			return false
		}
		if _, ok := d.value(false); !ok {
			return false
		}
		if done, ok := d.Sep('}'); !ok {
			return false
		} else if done {
			return true
		}
	}
}

// names are the member names of one object seen while checking: a list
// while it is short (on the stack), then a set.
type names struct {
	list [8][]byte
	n    int
	set  map[string]struct{}
}

// add records a name and reports whether it came before.
func (n *names) add(name []byte) bool {
	if n.set != nil {
		if _, ok := n.set[string(name)]; ok {
			return true
		}
		n.set[string(name)] = struct{}{}
		return false
	}
	for _, s := range n.list[:n.n] {
		if string(s) == string(name) {
			return true
		}
	}
	if n.n < len(n.list) {
		n.list[n.n] = name
		n.n++
		return false
	}
	n.set = make(map[string]struct{}, 32)
	for _, s := range n.list {
		n.set[string(s)] = struct{}{}
	}
	n.set[string(name)] = struct{}{}
	return false
}

func (d *decoder) array(build bool) (any, bool) {
	if d.depth++; d.depth > MaxDepth {
		return nil, false
	}
	defer func() { d.depth-- }()
	d.Pos++ // [
	var a []any
	if build {
		a = []any{}
	}
	d.WS()
	if d.Eat(']') {
		return a, true
	}
	for {
		v, ok := d.value(build)
		if !ok {
			return nil, false
		}
		if build {
			a = append(a, v)
		}
		if done, ok := d.Sep(']'); !ok {
			return nil, false
		} else if done {
			return a, true
		}
	}
}

// Float is the float64 a number's text reads as; exact reports that
// encoding/json writes that float64 back as the same text; ok false when
// float64 cannot hold it (encoding/json refuses it).
func Float(tok []byte, integer bool) (f float64, exact, ok bool) {
	if integer && len(tok) <= 15 { // no float parsing for small integers
		var n int64
		for _, c := range tok {
			if c != '-' {
				n = n*10 + int64(c-'0')
			}
		}
		if tok[0] == '-' {
			if n == 0 {
				return math.Copysign(0, -1), true, true
			}
			n = -n
		}
		return float64(n), true, true
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return 0, false, false
	}
	var buf [32]byte
	return f, string(AppendFloat(buf[:0], f)) == string(tok), true
}

// AppendFloat appends f as encoding/json writes a float64.
func AppendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // clean up e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// Members reads data as one JSON object and puts the text of the value of
// each of fields into out (nil when absent), checking the other members'
// values. It gives up (false) where encoding/json's decoding into a struct
// could differ: a name with escapes or other than ASCII, a name that
// matches a field only when case is ignored (encoding/json would take
// it), a field given twice; and on text that is not valid JSON. With
// o.Dups, a name given twice at any depth is a *DupError instead.
func Members(data []byte, fields []string, out [][]byte, o Options) (bool, error) {
	d := decoder{Scanner: Scanner{Data: data}, o: o}
	d.WS()
	if !d.Eat('{') {
		return false, nil
	}
	d.depth = 1
	var seen names
	d.WS()
	if d.Eat('}') {
		d.WS()
		return d.Pos == len(d.Data), nil
	}
	for {
		d.WS()
		at := d.Pos
		if !d.Eat('"') {
			return false, nil
		}
		k0 := d.Pos
		for ; d.Pos < len(d.Data) && d.Data[d.Pos] != '"'; d.Pos++ {
			if c := d.Data[d.Pos]; c == '\\' || c < 0x20 || c >= 0x80 {
				if !o.Dups {
					return false, nil
				}
				return membersSlow(data, o)
			}
		}
		if d.Pos >= len(d.Data) {
			return false, nil
		}
		key := d.Data[k0:d.Pos]
		d.Pos++
		if o.Dups && seen.add(key) {
			return false, &DupError{Name: string(key), At: at}
		}
		d.WS()
		if !d.Eat(':') {
			return false, nil
		}
		d.WS()
		v0 := d.Pos
		if _, ok := d.value(false); !ok {
			if d.dup != nil {
				return false, d.dup
			}
			return false, nil
		}
		for k, f := range fields {
			if string(key) == f {
				if out[k] != nil {
					return false, nil
				}
				out[k] = d.Data[v0:d.Pos]
			} else if asciiEqualFold(key, f) {
				if o.Dups {
					return membersSlow(data, o)
				}
				return false, nil
			}
		}
		if done, ok := d.Sep('}'); !ok {
			return false, nil
		} else if done {
			d.WS()
			return d.Pos == len(d.Data), nil
		}
	}
}

// membersSlow is Members giving up on a name it does not take, after
// checking the whole text for a name given twice.
func membersSlow(data []byte, o Options) (bool, error) {
	if _, err := Valid(data, o); err != nil {
		return false, err
	}
	return false, nil
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for k := range b {
		x, y := b[k], s[k]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// PlainString is the text of a JSON string with no escapes and only
// ASCII; ok false otherwise.
func PlainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c == '"' || c < 0x20 || c >= 0x80 {
			return "", false
		}
	}
	return string(raw[1 : len(raw)-1]), true
}
