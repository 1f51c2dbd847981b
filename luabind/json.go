package luabind

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/attune-dev/attune/internal/jsonscan"
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
// It reads with internal/jsonscan's Scanner, the one JSON reader of the
// tree (internal/jsonscan says why hand-written: measured against
// jsontext there), building Lua values as it goes. Short strings (keys,
// action types) are interned for the decoder's life. A JSONDecoder is not
// safe for concurrent use, like its State.
type JSONDecoder struct {
	st     *State
	s      jsonscan.Scanner
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
	d.s = jsonscan.Scanner{Data: b}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	return v, d.end()
}

// DecodeMembers decodes a JSON document that must be an object, appending
// its members to dst in document order (a repeated key appears twice).
func (d *JSONDecoder) DecodeMembers(b []byte, dst []JSONMember) ([]JSONMember, error) {
	d.s = jsonscan.Scanner{Data: b}
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
	if d.s.Pos < len(d.s.Data) {
		return d.fail(fmt.Sprintf("unexpected %q after the document", d.s.Data[d.s.Pos]))
	}
	return nil
}

func (d *JSONDecoder) fail(msg string) error {
	return fmt.Errorf("bad JSON at byte %d: %s", d.s.Pos, msg)
}

func (d *JSONDecoder) ws()             { d.s.WS() }
func (d *JSONDecoder) eat(c byte) bool { return d.s.Eat(c) }

func (d *JSONDecoder) value(depth int) (lua.LValue, error) {
	if depth > maxJSONDepth {
		return nil, d.fail("nested too deep")
	}
	d.ws()
	if d.s.Pos >= len(d.s.Data) {
		return nil, d.fail("unexpected end")
	}
	L := d.st.L
	switch c := d.s.Data[d.s.Pos]; {
	case c == '{':
		d.s.Pos++
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
		d.s.Pos++
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
		if d.s.Literal("true") {
			return lua.LTrue, nil
		}
	case c == 'f':
		if d.s.Literal("false") {
			return lua.LFalse, nil
		}
	case c == 'n':
		if d.s.Literal("null") {
			return lua.LNil, nil
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	}
	return nil, d.fail(fmt.Sprintf("unexpected %q", d.s.Data[d.s.Pos]))
}

// number reads a number as JSON writes it.
func (d *JSONDecoder) number() (lua.LValue, error) {
	tok, integer, ok := d.s.Number()
	if !ok {
		return nil, d.fail("bad number")
	}
	f, _, ok := jsonscan.Float(tok, integer)
	if !ok {
		return nil, d.fail("bad number")
	}
	if f == 0 {
		f = 0 // -0 reads as 0
	}
	return lua.LNumber(f), nil
}

// str reads a JSON string at the scanner's position.
func (d *JSONDecoder) str() (string, error) {
	if d.s.Peek() != '"' {
		return "", d.fail("want a string")
	}
	b, plain, why := d.s.String()
	switch why {
	case jsonscan.StrOK:
	case jsonscan.StrControl:
		return "", d.fail("control character in a string")
	case jsonscan.StrEscape:
		return "", d.fail("bad escape")
	case jsonscan.StrUnicode:
		return "", d.fail("bad \\u escape")
	default:
		return "", d.fail("unterminated string")
	}
	if !plain { // escapes, invalid UTF-8 (U+FFFD, as encoding/json)
		s, _ := jsonscan.Unquote(b)
		return s, nil
	}
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

// lstr reads a string value, interning short ones as Lua values.
func (d *JSONDecoder) lstr() (lua.LValue, error) {
	if d.values != nil {
		at := d.s.Pos
		if j := bytes.IndexByte(d.s.Data[at+1:], '"'); j >= 0 && j <= 32 {
			b := d.s.Data[at+1 : at+1+j]
			if plainASCII(b) {
				if v, ok := d.values[string(b)]; ok {
					d.s.Pos += j + 2
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
