package luabind

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	lua "github.com/attune-dev/attune/internal/lua"
)

// JSONDecoder decodes JSON documents into Lua values of one state without
// going through Go maps (a cold owner fold decodes every action of a log).
// It accepts exactly what encoding/json accepts, and decodes to the values
// ToLua would make of encoding/json's result: objects become tables with
// their members set in sorted key order (a repeated key keeps its last
// value), arrays become tables (an empty one a list), null becomes nil,
// invalid UTF-8 in a string becomes U+FFFD. Bytes after the document are
// refused. Objects and arrays nest at most 101 deep (below the object
// DecodeMembers reads, 101 more). FuzzDecode holds it to
// encoding/json.
//
// Short strings (keys, action types) are interned for the decoder's life.
// A JSONDecoder is not safe for concurrent use, like its State.
type JSONDecoder struct {
	st     *State
	b      []byte
	i      int
	keys   map[string]string
	values map[string]lua.LValue
	kvs    []JSONMember // members of the objects being read
}

// JSONMember is one member of a JSON object.
type JSONMember struct {
	Key   string
	Value lua.LValue
}

// maxIntern bounds each of a decoder's intern tables.
const maxIntern = 4096

// maxJSONDepth bounds the nesting of objects and arrays: the outermost is
// at depth 0.
const maxJSONDepth = 100

// NewJSONDecoder returns a decoder of JSON into st's values.
func NewJSONDecoder(st *State) *JSONDecoder {
	return &JSONDecoder{st: st, keys: map[string]string{}, values: map[string]lua.LValue{}}
}

// Decode decodes one JSON document.
func (d *JSONDecoder) Decode(b []byte) (lua.LValue, error) {
	d.b, d.i = b, 0
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	return v, d.end()
}

// DecodeMembers decodes a JSON document that must be an object, appending
// its members to dst in document order (a repeated key appears twice).
func (d *JSONDecoder) DecodeMembers(b []byte, dst []JSONMember) ([]JSONMember, error) {
	d.b, d.i = b, 0
	d.ws()
	if !d.eat('{') {
		return dst, d.fail("want an object")
	}
	d.ws()
	if !d.eat('}') {
		for {
			d.ws()
			key, err := d.str()
			if err != nil {
				return dst, err
			}
			d.ws()
			if !d.eat(':') {
				return dst, d.fail("want ':'")
			}
			v, err := d.value(0)
			if err != nil {
				return dst, err
			}
			dst = append(dst, JSONMember{key, v})
			d.ws()
			if d.eat(',') {
				continue
			}
			if d.eat('}') {
				break
			}
			return dst, d.fail("want ',' or '}'")
		}
	}
	return dst, d.end()
}

// end refuses anything but white space after the document.
func (d *JSONDecoder) end() error {
	d.ws()
	if d.i < len(d.b) {
		return d.fail(fmt.Sprintf("unexpected %q after the document", d.b[d.i]))
	}
	return nil
}

func (d *JSONDecoder) fail(msg string) error {
	return fmt.Errorf("bad JSON at byte %d: %s", d.i, msg)
}

func (d *JSONDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *JSONDecoder) eat(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *JSONDecoder) value(depth int) (lua.LValue, error) {
	if depth > maxJSONDepth {
		return nil, d.fail("nested too deep")
	}
	d.ws()
	if d.i >= len(d.b) {
		return nil, d.fail("unexpected end")
	}
	L := d.st.L
	switch c := d.b[d.i]; {
	case c == '{':
		d.i++
		t := L.CreateTable(0, 1) // NewTable would reserve 32 slots of each kind
		d.ws()
		if d.eat('}') {
			return t, nil
		}
		// The members are set in sorted key order (pairs() follows the
		// order keys were set in): gathered on d.kvs first unless they
		// arrive sorted, as the engine's own encoding writes them.
		start := len(d.kvs)
		sorted := true
		for {
			d.ws()
			k, err := d.str()
			if err != nil {
				d.kvs = d.kvs[:start]
				return nil, err
			}
			d.ws()
			if !d.eat(':') {
				d.kvs = d.kvs[:start]
				return nil, d.fail("want ':'")
			}
			v, err := d.value(depth + 1)
			if err != nil {
				d.kvs = d.kvs[:start]
				return nil, err
			}
			if n := len(d.kvs); n > start && d.kvs[n-1].Key >= k {
				sorted = false
			}
			d.kvs = append(d.kvs, JSONMember{k, v})
			d.ws()
			if d.eat(',') {
				continue
			}
			if d.eat('}') {
				kvs := d.kvs[start:]
				if !sorted {
					// a repeated key keeps its last value, as in the order read
					slices.SortStableFunc(kvs, func(a, b JSONMember) int { return strings.Compare(a.Key, b.Key) })
				}
				for _, m := range kvs {
					t.RawSetString(m.Key, m.Value)
				}
				clear(kvs)
				d.kvs = d.kvs[:start]
				return t, nil
			}
			d.kvs = d.kvs[:start]
			return nil, d.fail("want ',' or '}'")
		}
	case c == '[':
		d.i++
		t := L.CreateTable(4, 0)
		d.ws()
		if d.eat(']') {
			t.Metatable = d.st.ListMeta
			return t, nil
		}
		for n := 1; ; n++ {
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			t.RawSetInt(n, v)
			d.ws()
			if d.eat(',') {
				continue
			}
			if d.eat(']') {
				return t, nil
			}
			return nil, d.fail("want ',' or ']'")
		}
	case c == '"':
		return d.lstr()
	case c == 't':
		if bytes.HasPrefix(d.b[d.i:], []byte("true")) {
			d.i += 4
			return lua.LTrue, nil
		}
	case c == 'f':
		if bytes.HasPrefix(d.b[d.i:], []byte("false")) {
			d.i += 5
			return lua.LFalse, nil
		}
	case c == 'n':
		if bytes.HasPrefix(d.b[d.i:], []byte("null")) {
			d.i += 4
			return lua.LNil, nil
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	}
	return nil, d.fail(fmt.Sprintf("unexpected %q", d.b[d.i]))
}

// number reads a number as JSON writes it:
// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func (d *JSONDecoder) number() (lua.LValue, error) {
	start := d.i
	d.eat('-')
	switch {
	case d.eat('0'):
	case d.i < len(d.b) && d.b[d.i] >= '1' && d.b[d.i] <= '9':
		d.digits()
	default:
		return nil, d.fail("bad number")
	}
	integer := true
	if d.eat('.') {
		integer = false
		if d.digits() == 0 {
			return nil, d.fail("bad number")
		}
	}
	if d.eat('e') || d.eat('E') {
		integer = false
		if !d.eat('+') {
			d.eat('-')
		}
		if d.digits() == 0 {
			return nil, d.fail("bad number")
		}
	}
	b := d.b[start:d.i]
	// small integers need no float parsing
	if integer && len(b) <= 15 {
		var n int64
		for _, c := range b {
			if c != '-' {
				n = n*10 + int64(c-'0')
			}
		}
		if b[0] == '-' {
			n = -n
		}
		return lua.LNumber(n), nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return nil, d.fail("bad number")
	}
	return lua.LNumber(f), nil
}

func (d *JSONDecoder) digits() int {
	n := 0
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
		n++
	}
	return n
}

// str reads a JSON string at d.i.
func (d *JSONDecoder) str() (string, error) {
	if !d.eat('"') {
		return "", d.fail("want a string")
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		if c == '"' {
			b := d.b[start:d.i]
			if !utf8.Valid(b) {
				break
			}
			d.i++
			if d.keys != nil && len(b) <= 32 {
				if s, ok := d.keys[string(b)]; ok {
					return s, nil
				}
				s := string(b)
				if len(d.keys) < maxIntern {
					d.keys[s] = s
				}
				return s, nil
			}
			return string(b), nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		d.i++
	}
	// escapes, control characters, invalid UTF-8: the slow way, from the start
	d.i = start
	var out []byte
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return string(out), nil
		case c < 0x20:
			return "", d.fail("control character in a string")
		case c == '\\':
			if d.i+1 >= len(d.b) {
				return "", d.fail("unterminated escape")
			}
			e := d.b[d.i+1]
			d.i += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := d.hex4()
				if !ok {
					return "", d.fail("bad \\u escape")
				}
				if utf16.IsSurrogate(r) {
					save := d.i
					if d.i+1 < len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
						d.i += 2
						if r2, ok := d.hex4(); ok {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								out = utf8.AppendRune(out, dec)
								continue
							}
						}
					}
					d.i = save
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
			default:
				return "", d.fail("bad escape")
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			d.i++
		default:
			r, size := utf8.DecodeRune(d.b[d.i:])
			d.i += size
			out = utf8.AppendRune(out, r) // RuneError for an invalid byte, as encoding/json
		}
	}
	return "", d.fail("unterminated string")
}

// lstr reads a string value, interning short ones as Lua values.
func (d *JSONDecoder) lstr() (lua.LValue, error) {
	if d.values != nil {
		if j := bytes.IndexByte(d.b[d.i+1:], '"'); j >= 0 && j <= 32 {
			b := d.b[d.i+1 : d.i+1+j]
			if plainASCII(b) {
				if v, ok := d.values[string(b)]; ok {
					d.i += j + 2
					return v, nil
				}
				s, err := d.str()
				if err != nil {
					return nil, err
				}
				v := lua.LValue(lua.LString(s))
				if len(d.values) < maxIntern {
					d.values[s] = v
				}
				return v, nil
			}
		}
	}
	s, err := d.str()
	if err != nil {
		return nil, err
	}
	return lua.LString(s), nil
}

// plainASCII: printable ASCII with no escapes, a string JSON holds as is.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func (d *JSONDecoder) hex4() (rune, bool) {
	if d.i+4 > len(d.b) {
		return 0, false
	}
	var n rune
	for _, c := range d.b[d.i : d.i+4] {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	d.i += 4
	return n, true
}
