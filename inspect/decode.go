package inspect

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/attune-dev/attune/session"
)

// Reading a journal for the timeline. A timeline shows the host values of
// a session (arguments, results, inputs) as they were journaled: it never
// needs them as Go values. So an entry is decoded here by a scanner that
// takes its fields and leaves each host value as the JSON it was stored as
// (a json.RawMessage, checked to be valid JSON), which the timeline's
// encoder copies through. Fields the scanner does not take itself (a note,
// revisions, diagnostics, fields of a newer engine) are decoded by
// encoding/json, one field at a time, into the same session.Entry; an entry
// the scanner cannot read (not an object, a key with escapes, a number
// where encoding/json would fail) is decoded by encoding/json as a whole,
// which gives its error.

// decoder decodes the entries of a journal. It keeps the strings it read
// last of the fields that repeat (a tool's path, a status) and the floor's
// usual verdict, so that a long journal does not allocate them again and
// again.
type decoder struct {
	path, status string
	floorPassed  any // json.RawMessage(floorPassed)
}

func newDecoder() *decoder { return &decoder{floorPassed: json.RawMessage(floorPassed)} }

// decode decodes one stored journal entry into en (zeroed first).
func (dc *decoder) decode(data []byte, en *session.Entry) error {
	*en = session.Entry{}
	if dc.scan(data, en) {
		return nil
	}
	*en = session.Entry{}
	return json.Unmarshal(data, en)
}

// scan reads data into en; false when it cannot (en is then partly set).
func (dc *decoder) scan(d []byte, en *session.Entry) bool {
	i := skipWS(d, 0)
	if i >= len(d) || d[i] != '{' {
		return false
	}
	i = skipWS(d, i+1)
	if i < len(d) && d[i] == '}' {
		return skipWS(d, i+1) == len(d)
	}
	for {
		if i >= len(d) || d[i] != '"' {
			return false
		}
		k0 := i
		ke := bytes.IndexByte(d[i+1:], '"')
		if ke < 0 {
			return false
		}
		key := d[i+1 : i+1+ke]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = skipWS(d, i+2+ke)
		if i >= len(d) || d[i] != ':' {
			return false
		}
		v0 := skipWS(d, i+1)
		v1, canon, ok := skipValue(d, v0, 0)
		if !ok {
			return false
		}
		if !dc.setField(en, key, d[v0:v1], canon, d[k0:v1]) {
			return false
		}
		i = skipWS(d, v1)
		if i >= len(d) {
			return false
		}
		if d[i] == '}' {
			return skipWS(d, i+1) == len(d)
		}
		if d[i] != ',' {
			return false
		}
		i = skipWS(d, i+1)
	}
}

// setField sets the field of en that key names to the valid JSON value v
// (member is `"key":v`, for encoding/json).
func (dc *decoder) setField(en *session.Entry, key, v []byte, canon bool, member []byte) bool {
	var ok bool
	switch string(key) {
	case "t":
		en.Type, ok = entryType(v)
	case "status":
		var st string
		st, ok = again(&dc.status, v)
		en.Status = session.Status(st)
	case "key":
		en.Key, ok = str(v)
	case "error":
		en.Error, ok = str(v)
	case "code":
		en.Code, ok = str(v)
	case "path":
		en.Path, ok = again(&dc.path, v)
	case "call_id":
		en.CallID, ok = str(v)
	case "owner":
		en.Owner, ok = str(v)
	case "name":
		en.Name, ok = str(v)
	case "kind":
		en.Kind, ok = str(v)
	case "reason":
		en.Reason, ok = str(v)
	case "refused_by":
		en.RefusedBy, ok = str(v)
	case "refused_at":
		en.RefusedAt, ok = str(v)
	case "id":
		en.ID, ok = str(v)
	case "pin":
		en.Pin, ok = str(v)
	case "engine":
		en.Engine, ok = str(v)
	case "not_plain":
		en.NotPlain, ok = str(v)
	case "turn":
		en.Turn, ok = integer(v)
	case "round":
		en.Round, ok = integer(v)
	case "gen":
		en.Gen, ok = integer(v)
	case "rev":
		var n int
		n, ok = integer(v)
		en.Rev = int64(n)
	case "context_fresh":
		en.ContextFresh, ok = boolean(v)
	case "host_continue":
		en.HostContinue, ok = boolean(v)
	case "continue":
		en.Continue, ok = boolean(v)
	case "auth":
		en.Auth, ok = boolean(v)
	case "input":
		en.Input = raw(v, canon)
		return true
	case "value":
		if string(v) == floorPassed {
			en.Value = dc.floorPassed
		} else {
			en.Value = raw(v, canon)
		}
		return true
	case "result":
		en.Result = raw(v, canon)
		return true
	case "harness":
		en.Harness = raw(v, canon)
		return true
	default: // note, revs, diagnostics, output, and what a newer engine adds
		buf := make([]byte, 0, len(member)+2)
		buf = append(append(append(buf, '{'), member...), '}')
		return json.Unmarshal(buf, en) == nil
	}
	return ok || string(v) == "null"
}

// raw is a host value as the timeline keeps it: nil for null, else its
// JSON, made canonical (as encoding/json writes it) when it is not.
func raw(v []byte, canon bool) any {
	if string(v) == "null" {
		return nil
	}
	if !canon {
		if c, err := json.Marshal(json.RawMessage(v)); err == nil {
			return json.RawMessage(c)
		}
	}
	return json.RawMessage(v)
}

// entryType reads an entry's type, without allocating the usual ones.
func entryType(v []byte) (string, bool) {
	if len(v) >= 2 && v[0] == '"' {
		switch t := v[1 : len(v)-1]; string(t) {
		case session.Tool:
			return session.Tool, true
		case session.Core:
			return session.Core, true
		case session.Floor:
			return session.Floor, true
		case session.Trace:
			return session.Trace, true
		case session.Emit:
			return session.Emit, true
		case session.Consume:
			return session.Consume, true
		}
	}
	return str(v)
}

// again reads a string, as last holds it when it is the same as the last
// one read.
func again(last *string, v []byte) (string, bool) {
	if len(v) >= 2 && v[0] == '"' && string(v[1:len(v)-1]) == *last && bytes.IndexByte(v, '\\') < 0 {
		return *last, true
	}
	s, ok := str(v)
	if ok {
		*last = s
	}
	return s, ok
}

// str reads a JSON string; false for anything else (null included).
func str(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	body := v[1 : len(v)-1]
	if bytes.IndexByte(body, '\\') < 0 && ascii(body) {
		return string(body), true
	}
	var s string
	return s, json.Unmarshal(v, &s) == nil
}

func ascii(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// integer reads a JSON integer that fits an int.
func integer(v []byte) (int, bool) {
	n, err := strconv.ParseInt(string(v), 10, 64)
	return int(n), err == nil
}

func boolean(v []byte) (bool, bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

func skipWS(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}

// maxScanDepth is how deep skipValue follows nesting; deeper values go to
// encoding/json.
const maxScanDepth = 200

// skipValue checks the JSON value at d[i:] and returns where it ends, and
// whether it is canonical: as encoding/json would write it again (no
// whitespace, no character encoding/json escapes: <, >, &, U+2028, U+2029).
func skipValue(d []byte, i, depth int) (end int, canon, ok bool) {
	if i >= len(d) || depth > maxScanDepth {
		return i, false, false
	}
	canon = true
	switch c := d[i]; {
	case c == '"':
		return skipString(d, i)
	case c == '{' || c == '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		j := i + 1
		if j < len(d) && d[j] == closer {
			return j + 1, true, true
		}
		for {
			k := skipWS(d, j)
			canon = canon && k == j
			j = k
			if c == '{' {
				var kc bool
				if j >= len(d) || d[j] != '"' {
					return j, false, false
				}
				if j, kc, ok = skipString(d, j); !ok {
					return j, false, false
				}
				k = skipWS(d, j)
				canon = canon && kc && k == j
				j = k
				if j >= len(d) || d[j] != ':' {
					return j, false, false
				}
				k = skipWS(d, j+1)
				canon = canon && k == j+1
				j = k
			}
			var vc bool
			if j, vc, ok = skipValue(d, j, depth+1); !ok {
				return j, false, false
			}
			k = skipWS(d, j)
			canon = canon && vc && k == j
			j = k
			if j >= len(d) {
				return j, false, false
			}
			if d[j] == closer {
				return j + 1, canon, true
			}
			if d[j] != ',' {
				return j, false, false
			}
			j++
		}
	case c == 't':
		return lit(d, i, "true")
	case c == 'f':
		return lit(d, i, "false")
	case c == 'n':
		return lit(d, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return skipNumber(d, i)
	}
	return i, false, false
}

func lit(d []byte, i int, word string) (int, bool, bool) {
	if len(d)-i >= len(word) && string(d[i:i+len(word)]) == word {
		return i + len(word), true, true
	}
	return i, false, false
}

// skipString checks the string at d[i] (a quote); canon is false when it
// holds a character encoding/json escapes in what it writes (<, >, &,
// U+2028, U+2029).
func skipString(d []byte, i int) (int, bool, bool) {
	canon := true
	for j := i + 1; j < len(d); j++ {
		switch c := d[j]; {
		case c == '"':
			return j + 1, canon, true
		case c < 0x20:
			return j, false, false
		case c == '\\':
			j++
			if j >= len(d) {
				return j, false, false
			}
			switch d[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(d)-j < 5 || !hex4(d[j+1:j+5]) {
					return j, false, false
				}
				j += 4
			default:
				return j, false, false
			}
		case c == '<' || c == '>' || c == '&':
			canon = false
		case c == 0xE2 && j+2 < len(d) && d[j+1] == 0x80 && (d[j+2] == 0xA8 || d[j+2] == 0xA9): // U+2028, U+2029
			canon = false
		}
	}
	return len(d), false, false
}

func hex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// skipNumber checks the number at d[i] (encoding/json writes raw JSON's
// numbers as they are).
func skipNumber(d []byte, i int) (int, bool, bool) {
	j := i
	if d[j] == '-' {
		j++
	}
	switch {
	case j < len(d) && d[j] == '0':
		j++
	case j < len(d) && d[j] >= '1' && d[j] <= '9':
		for j < len(d) && d[j] >= '0' && d[j] <= '9' {
			j++
		}
	default:
		return j, false, false
	}
	if j < len(d) && d[j] == '.' {
		k := digits(d, j+1)
		if k == j+1 {
			return k, false, false
		}
		j = k
	}
	if j < len(d) && (d[j] == 'e' || d[j] == 'E') {
		j++
		if j < len(d) && (d[j] == '+' || d[j] == '-') {
			j++
		}
		k := digits(d, j)
		if k == j {
			return k, false, false
		}
		j = k
	}
	return j, true, true
}

// digits is where the run of decimal digits of d from j ends.
func digits(d []byte, j int) int {
	for j < len(d) && d[j] >= '0' && d[j] <= '9' {
		j++
	}
	return j
}
