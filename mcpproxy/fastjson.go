package mcpproxy

import (
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// A tools/call decodes three JSON texts on its way through the proxy (the
// client's message, its arguments, the upstream's result), and
// encoding/json spent more CPU on them than the tool chain's Lua guard:
// reflection for every value, and every text scanned twice (once to
// validate). jsonScan reads plain JSON into the values encoding/json
// gives an `any` (map[string]any, []any, string, float64, bool, nil) in
// one pass. It is strict: it accepts only texts encoding/json accepts, and
// gives up (ok false) on anything it does not handle itself (a
// number float64 cannot hold, a nesting deeper than encoding/json's); the
// callers then decode with encoding/json as before, so results and errors
// are encoding/json's in every case. fastjson_test.go fuzzes the two
// against each other.

// maxDepth is encoding/json's nesting limit; deeper texts go to it.
const maxDepth = 10000

type jsonScan struct {
	data  []byte
	i     int
	depth int
}

// parseAny decodes data as json.Unmarshal into an `any` does; ok is false
// when the caller must ask encoding/json (data is not valid JSON, or has
// something jsonScan leaves to it).
func parseAny(data []byte) (v any, ok bool) {
	s := jsonScan{data: data}
	v, ok = s.value(true)
	if !ok {
		return nil, false
	}
	s.ws()
	return v, s.i == len(s.data)
}

// validJSON reports whether data is one JSON value (with whitespace
// around), as json.Valid; false may also mean "ask json.Valid".
func validJSON(data []byte) bool {
	s := jsonScan{data: data}
	if _, ok := s.value(false); !ok {
		return false
	}
	s.ws()
	return s.i == len(s.data)
}

func (s *jsonScan) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value reads one value at s.i (after whitespace); build false only
// validates (the value returned is nil).
func (s *jsonScan) value(build bool) (any, bool) {
	s.ws()
	if s.i >= len(s.data) {
		return nil, false
	}
	switch c := s.data[s.i]; {
	case c == '{':
		return s.object(build)
	case c == '[':
		return s.array(build)
	case c == '"':
		str, ok := s.str(build)
		if !ok || !build {
			return nil, ok
		}
		return str, true
	case c == 't':
		return true, s.lit("true")
	case c == 'f':
		return false, s.lit("false")
	case c == 'n':
		return nil, s.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number(build)
	}
	return nil, false
}

func (s *jsonScan) lit(word string) bool {
	if len(s.data)-s.i < len(word) || string(s.data[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

func (s *jsonScan) object(build bool) (any, bool) {
	if s.depth++; s.depth > maxDepth {
		return nil, false
	}
	defer func() { s.depth-- }()
	s.i++ // {
	var m map[string]any
	if build {
		m = map[string]any{}
	}
	s.ws()
	if s.i < len(s.data) && s.data[s.i] == '}' {
		s.i++
		return m, true
	}
	for {
		s.ws()
		if s.i >= len(s.data) || s.data[s.i] != '"' {
			return nil, false
		}
		key, ok := s.str(build)
		if !ok {
			return nil, false
		}
		s.ws()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return nil, false
		}
		s.i++
		v, ok := s.value(build)
		if !ok {
			return nil, false
		}
		if build {
			m[key] = v
		}
		if done, ok := s.sep('}'); !ok {
			return nil, false
		} else if done {
			return m, true
		}
	}
}

func (s *jsonScan) array(build bool) (any, bool) {
	if s.depth++; s.depth > maxDepth {
		return nil, false
	}
	defer func() { s.depth-- }()
	s.i++ // [
	var a []any
	if build {
		a = []any{}
	}
	s.ws()
	if s.i < len(s.data) && s.data[s.i] == ']' {
		s.i++
		return a, true
	}
	for {
		v, ok := s.value(build)
		if !ok {
			return nil, false
		}
		if build {
			a = append(a, v)
		}
		if done, ok := s.sep(']'); !ok {
			return nil, false
		} else if done {
			return a, true
		}
	}
}

// sep reads what follows a member or an item: a comma (more to come) or
// the closing byte (done); anything else is not JSON (!ok).
func (s *jsonScan) sep(closing byte) (done, ok bool) {
	s.ws()
	if s.i >= len(s.data) {
		return false, false
	}
	switch s.data[s.i] {
	case ',':
		s.i++
		return false, true
	case closing:
		s.i++
		return true, true
	}
	return false, false
}

// str reads a string at s.i (its opening quote).
func (s *jsonScan) str(build bool) (string, bool) {
	start := s.i
	s.i++
	escaped, ascii := false, true
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			s.i++
			if !build {
				return "", !escaped || validEscapes(s.data[start+1:s.i-1])
			}
			raw := s.data[start+1 : s.i-1]
			if !escaped && (ascii || utf8.Valid(raw)) {
				return string(raw), true
			}
			return unquote(raw)
		case c == '\\':
			escaped = true
			s.i += 2 // the escaped byte is never the closing quote
		case c < 0x20:
			return "", false
		default:
			if c >= 0x80 {
				ascii = false
			}
			s.i++
		}
	}
	return "", false
}

// unquote is the text of a string's body with escapes, or with bytes
// that are not UTF-8, as encoding/json reads it: each such byte, and each
// \u escape of half a surrogate pair alone, is U+FFFD.
func unquote(s []byte) (string, bool) {
	if !validEscapes(s) {
		return "", false
	}
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
					rr = unicode.ReplacementChar
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
			b = utf8.AppendRune(b, rr)
			r += size
		}
	}
	return string(b), true
}

// hex4 is the value of four hex digits (validEscapes checked them).
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

// validEscapes reports whether the escapes in a string's body are JSON's.
func validEscapes(b []byte) bool {
	for k := 0; k < len(b); k++ {
		if b[k] != '\\' {
			continue
		}
		if k+1 >= len(b) {
			return false
		}
		switch b[k+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			k++
		case 'u':
			if k+5 >= len(b) {
				return false
			}
			for _, h := range b[k+2 : k+6] {
				if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
					return false
				}
			}
			k += 5
		default:
			return false
		}
	}
	return true
}

// number reads a number by JSON's grammar, as a float64.
func (s *jsonScan) number(build bool) (any, bool) {
	start := s.i
	if s.data[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.data) && s.data[s.i] == '0':
		s.i++
	case s.i < len(s.data) && s.data[s.i] >= '1' && s.data[s.i] <= '9':
		s.digits()
	default:
		return nil, false
	}
	if s.i < len(s.data) && s.data[s.i] == '.' {
		s.i++
		if !s.digits() {
			return nil, false
		}
	}
	if s.i < len(s.data) && (s.data[s.i] == 'e' || s.data[s.i] == 'E') {
		s.i++
		if s.i < len(s.data) && (s.data[s.i] == '+' || s.data[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return nil, false
		}
	}
	if !build {
		return nil, true
	}
	f, err := strconv.ParseFloat(string(s.data[start:s.i]), 64)
	if err != nil { // out of float64's range: encoding/json says so
		return nil, false
	}
	return f, true
}

// digits reads one or more digits.
func (s *jsonScan) digits() bool {
	n := s.i
	for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
		s.i++
	}
	return s.i > n
}

// topMembers reads data as one JSON object and puts the raw text of the
// value of each of fields into out (nil when absent). It gives up (false)
// where encoding/json's decoding into a struct could differ: a key with
// escapes or other than ASCII, a key that matches a field only when case
// is ignored (encoding/json would take it), a field given twice; and on
// text that is not valid JSON.
func topMembers(data []byte, fields []string, out [][]byte) bool {
	s := jsonScan{data: data}
	s.ws()
	if s.i >= len(s.data) || s.data[s.i] != '{' {
		return false
	}
	s.i++
	s.depth = 1
	s.ws()
	if s.i < len(s.data) && s.data[s.i] == '}' {
		s.i++
		s.ws()
		return s.i == len(s.data)
	}
	for {
		s.ws()
		if s.i >= len(s.data) || s.data[s.i] != '"' {
			return false
		}
		k0 := s.i + 1
		for s.i++; s.i < len(s.data) && s.data[s.i] != '"'; s.i++ {
			if c := s.data[s.i]; c == '\\' || c < 0x20 || c >= 0x80 {
				return false
			}
		}
		if s.i >= len(s.data) {
			return false
		}
		key := s.data[k0:s.i]
		s.i++
		s.ws()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		v0 := s.i
		if _, ok := s.value(false); !ok {
			return false
		}
		for k, f := range fields {
			if string(key) == f {
				if out[k] != nil {
					return false
				}
				out[k] = s.data[v0:s.i]
			} else if asciiEqualFold(key, f) {
				return false
			}
		}
		s.ws()
		if s.i >= len(s.data) {
			return false
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			s.ws()
			return s.i == len(s.data)
		default:
			return false
		}
	}
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

// plainString is the text of a JSON string with no escapes and only
// ASCII; ok false otherwise.
func plainString(raw []byte) (string, bool) {
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

var messageFields = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// fastWire fills w from a message as json.Unmarshal would, for the usual
// messages (no error member, a version, id and method written plainly);
// false: decode it with encoding/json.
func fastWire(data []byte, w *wireMessage) bool {
	var out [6][]byte
	if !topMembers(data, messageFields, out[:]) || out[5] != nil {
		return false
	}
	var ok bool
	if w.Version, ok = plainString(out[0]); !ok {
		return false
	}
	if out[1] != nil {
		id, ok := parseAny(out[1])
		switch id.(type) {
		case float64, string, nil:
		default:
			ok = false
		}
		if !ok {
			return false
		}
		w.ID = out[1] // the token as written
	}
	if m := out[2]; m != nil && string(m) != "null" {
		method, ok := plainString(m)
		if !ok {
			return false
		}
		w.Method = &method
	}
	w.Params, w.Result = out[3], out[4]
	return true
}

var callFields = []string{"name", "arguments", "_meta"}

// fastCallParams decodes the params of tools/call as json.Unmarshal into
// callParams would, and keeps the arguments' text; false: decode them
// with encoding/json.
func fastCallParams(data []byte, c *callParams) (rawArgs []byte, ok bool) {
	var out [3][]byte
	if !topMembers(data, callFields, out[:]) {
		return nil, false
	}
	if out[0] != nil && string(out[0]) != "null" {
		if c.Name, ok = plainString(out[0]); !ok {
			return nil, false
		}
	}
	if out[1] != nil {
		if c.Arguments, ok = parseAny(out[1]); !ok {
			return nil, false
		}
	}
	c.Meta = out[2]
	return out[1], true
}
