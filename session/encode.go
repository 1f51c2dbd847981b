package session

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
)

// encodeEntry is json.Marshal(e), written by hand for the entries a turn
// writes most (tool calls, the calls a harness leaves open and core
// outcomes: a type, a path, a call id, a key and plain values, their
// status and result, the harness's event, the guards' verdicts); every
// other entry goes through encoding/json. Both decode to the same Entry.
func encodeEntry(e *Entry) ([]byte, error) {
	var rc encCache
	return appendEntry(make([]byte, 0, 48+len(e.Path)+len(e.CallID)+len(e.Error)), e, &rc)
}

// appendEntry appends e's encoding to b (a batch shares one buffer); rc
// spares checking values checked just before.
func appendEntry(b []byte, e *Entry, rc *encCache) ([]byte, error) {
	if e.Turn != 0 || e.Round != 0 || e.ContextFresh || e.HostContinue ||
		e.Output != nil || e.Continue || e.Owner != "" || e.Name != "" || e.Auth ||
		e.Kind != "" || e.Reason != "" || e.RefusedBy != "" || e.Diagnostics != nil ||
		e.Note != nil || e.ID != "" || e.Revs != nil || e.Pin != "" || e.Engine != "" || e.NotPlain != "" ||
		e.RefusedAt != "" || e.Rev != 0 {
		c := *e // a copy escapes to encoding/json, not e: callers keep their entries on the stack
		j, err := json.Marshal(&c)
		if err != nil {
			return nil, err
		}
		return append(b, j...), nil
	}
	switch e.Type { // the types such entries have, without a check
	case Tool:
		b = append(b, `{"t":"tool"`...)
	case Core:
		b = append(b, `{"t":"core"`...)
	case Floor:
		b = append(b, `{"t":"floor"`...)
	default:
		b = append(b, `{"t":`...)
		b = appendString(b, e.Type)
	}
	if e.Status != "" {
		b = rc.status.append(b, `,"status":`, string(e.Status))
	}
	var err error
	if e.Input != nil { // a call's arguments (tool-open entries)
		b = append(b, `,"input":`...)
		if b, err = appendValue(b, e.Input, rc); err != nil {
			return nil, err
		}
	}
	if e.Key != "" {
		b = append(b, `,"key":`...)
		b = appendString(b, e.Key)
	}
	if e.Value != nil {
		b = append(b, `,"value":`...)
		if b, err = appendValue(b, e.Value, rc); err != nil {
			return nil, err
		}
	}
	if e.Error != "" {
		b = append(b, `,"error":`...)
		b = appendString(b, e.Error)
	}
	if e.Code != "" {
		b = append(b, `,"code":`...)
		b = appendString(b, e.Code)
	}
	if e.Path != "" {
		b = rc.path.append(b, `,"path":`, e.Path)
	}
	if e.CallID != "" {
		b = append(b, `,"call_id":`...)
		b = appendString(b, e.CallID)
	}
	if e.Result != nil {
		b = append(b, `,"result":`...)
		if b, err = appendValue(b, e.Result, rc); err != nil {
			return nil, err
		}
	}
	if e.Harness == nil && len(e.Guards) == 0 { // encoding/json leaves an empty list out too
		return appendGen(b, e.Gen), nil
	}
	b = appendGen(b, e.Gen)
	b = b[:len(b)-1]      // after gen, as in Entry
	if e.Harness != nil { // the harness's event a call came with
		b = append(b, `,"harness":`...)
		if b, err = appendValue(b, e.Harness, rc); err != nil {
			return nil, err
		}
	}
	if len(e.Guards) == 0 {
		return append(b, '}'), nil
	}
	return appendGuards(b, e.Guards), nil
}

// appendGuards appends a call's guard verdicts as the "guards" field and
// closes the entry: what encoding/json writes for them, field by field,
// so a guarded call inside a turn is not a json.Marshal of the whole
// entry.
func appendGuards(b []byte, gs []GuardVerdict) []byte {
	b = append(b, `,"guards":[`...)
	for k := range gs {
		g := &gs[k]
		if k > 0 {
			b = append(b, ',')
		}
		b = appendString(append(b, `{"at":`...), g.At)
		if g.Pattern != "" {
			b = appendString(append(b, `,"pattern":`...), g.Pattern)
		}
		b = appendString(append(b, `,"verdict":`...), g.Verdict)
		if g.Reason != "" {
			b = appendString(append(b, `,"reason":`...), g.Reason)
		}
		if g.Error != "" {
			b = appendString(append(b, `,"error":`...), g.Error)
		}
		if len(g.Marks) > 0 {
			b = append(b, `,"marks":[`...)
			for j, m := range g.Marks {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendString(b, m)
			}
			b = append(b, ']')
		}
		if g.Attempt != 0 {
			b = strconv.AppendInt(append(b, `,"attempt":`...), int64(g.Attempt), 10)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// appendValue appends v as JSON: plain data (nil, strings, booleans,
// finite numbers, and maps of strings and lists of plain data, nested) and
// valid raw JSON directly, anything else through encoding/json, which also
// gives the errors (a NaN, a cycle) as json.Marshal(v) gives them.
func appendValue(b []byte, v any, rc *encCache) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return appendString(b, x), nil
	case json.RawMessage:
		if rc.valid(x) {
			return append(b, x...), nil
		}
		data, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		return append(b, data...), nil
	}
	return appendPlain(b, v, 0)
}

// maxPlainDepth is how deep appendPlain nests maps and lists itself; a
// deeper value goes to encoding/json, which finds a cycle and says so
// where a recursion of our own would overflow the stack.
const maxPlainDepth = 64

// appendPlain appends v, found depth maps and lists deep, as json.Marshal
// encodes it, byte for byte: map keys in byte-wise order, strings escaped
// as encoding/json escapes them (HTML characters, U+2028 and U+2029,
// invalid UTF-8), numbers in its format.
func appendPlain(b []byte, v any, depth int) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case float64:
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			return appendFloat(b, x), nil
		}
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		if depth < maxPlainDepth {
			return appendMap(b, x, depth+1)
		}
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		if depth < maxPlainDepth {
			b = append(b, '[')
			var err error
			for k, e := range x {
				if k > 0 {
					b = append(b, ',')
				}
				if b, err = appendPlain(b, e, depth+1); err != nil {
					return nil, err
				}
			}
			return append(b, ']'), nil
		}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, data...), nil
}

// appendMap appends m with its keys sorted as encoding/json sorts them.
func appendMap(b []byte, m map[string]any, depth int) ([]byte, error) {
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	var err error
	for n, k := range keys {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(appendString(b, k), ':')
		if b, err = appendPlain(b, m[k], depth); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendFloat appends the finite f as encoding/json does: integers below
// 1e15 as integers (-0 keeps its sign), others in the shortest form that
// reads back the same, with an exponent below 1e-6 and from 1e21 on
// ("1e-7", not "1e-07").
func appendFloat(b []byte, f float64) []byte {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 && (f != 0 || !math.Signbit(f)) {
		return strconv.AppendInt(b, int64(f), 10)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// encCache remembers the last raw JSON value found valid (a copy) and the
// last status and path found plain with their encoded fields, so that
// values a journal writes again and again (a floor's passing verdict, a
// tool's path) are compared instead of checked and encoded each time.
type encCache struct {
	last   []byte
	status knownField
	path   knownField
}

// knownField is the last plain value of one field and the field as encoded
// (`,"path":"fs/read"`).
type knownField struct {
	value string
	enc   []byte
}

// append appends the field name (`,"path":`) with the value s.
func (f *knownField) append(b []byte, name, s string) []byte {
	if s != f.value { // s is never "": the zero field matches nothing
		if !plain(s) {
			return appendString(append(b, name...), s)
		}
		f.value = s
		f.enc = appendQuoted(append(f.enc[:0], name...), s)
	}
	return append(b, f.enc...)
}

// maxRawCache is the longest raw value an encCache keeps.
const maxRawCache = 256

// valid reports whether x is valid JSON.
func (rc *encCache) valid(x []byte) bool {
	if len(x) > 0 && bytes.Equal(rc.last, x) {
		return true
	}
	if !json.Valid(x) {
		return false
	}
	if len(x) <= maxRawCache {
		rc.last = append(rc.last[:0], x...)
	}
	return true
}

// appendString appends s as a JSON string. Printable ASCII without quotes
// or backslashes is copied; any other string goes through encoding/json.
func appendString(b []byte, s string) []byte {
	if !plain(s) {
		data, _ := json.Marshal(s) // a string always encodes
		return append(b, data...)
	}
	return appendQuoted(b, s)
}

// appendQuoted appends s between quotes, as it is.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plain reports whether s holds only bytes a JSON string holds as they are
// (encoding/json escapes control characters, quotes, backslashes, <, > and
// &, and checks anything not ASCII). It looks at eight bytes at a time.
func plain(s string) bool {
	k := 0
	for ; k+8 <= len(s); k += 8 {
		x := uint64(s[k]) | uint64(s[k+1])<<8 | uint64(s[k+2])<<16 | uint64(s[k+3])<<24 |
			uint64(s[k+4])<<32 | uint64(s[k+5])<<40 | uint64(s[k+6])<<48 | uint64(s[k+7])<<56
		if x&hi8 != 0 || below(x, 0x20) != 0 || zeroByte(x^(lo8*'"'))|zeroByte(x^(lo8*'\\'))|zeroByte(x^(lo8*'<'))|zeroByte(x^(lo8*'>'))|zeroByte(x^(lo8*'&')) != 0 {
			return false
		}
	}
	for ; k < len(s); k++ {
		if plainBytes[s[k]] == 0 {
			return false
		}
	}
	return true
}

// plainBytes has 1 at each byte plain holds as it is: the printable ASCII
// bytes but ", &, <, > and \\.
const plainBytes = "" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" + // 0x00
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" + // 0x10
	"\x01\x01\x00\x01\x01\x01\x00\x01\x01\x01\x01\x01\x01\x01\x01\x01" + // 0x20: " &
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x00\x01\x00\x01" + // 0x30: < >
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" + // 0x40
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x00\x01\x01\x01" + // 0x50: \\
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" + // 0x60
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" + // 0x70
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" + // 0x80...
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// Eight bytes in a word: lo8 has 1 in each, hi8 the high bit of each.
const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// zeroByte is not 0 when a byte of x is 0; below, when a byte of x is
// less than n (n <= 128). Neither misses a byte; which bits are set beyond
// the first such byte does not matter here.
func zeroByte(x uint64) uint64        { return (x - lo8) &^ x & hi8 }
func below(x uint64, n uint64) uint64 { return (x - lo8*n) &^ x & hi8 }
