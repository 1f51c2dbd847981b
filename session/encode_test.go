package session

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// encodeEntry writes what json.Marshal writes, byte for byte, for every
// shape of entry (the journal's readers decode either).
func TestEncodeEntryMatchesJSON(t *testing.T) {
	out := "o"
	values := []any{nil, "x", "", "quote\" and \\ and \n", "ünïcode", "<a&b>", "bad \xff utf-8", true, false,
		0.0, 1.0, -3.0, 0.5, 1e21, 123456789012345.0, math.MaxInt32 * 4.0,
		map[string]any{"path": "/a", "n": 2.0, "ok": true}, []any{"a", 1.0, nil},
		json.RawMessage(`{"reason":"","refused":false}`), json.RawMessage(`[1,2]`), "long plain string, eight bytes and more",
		"long string with a quote \" past eight bytes", "long string, <html> past eight bytes", "tab\tand more than eight bytes",
		math.Copysign(0, -1), -1e15, 1e15, 1e20, 1e-6, 1e-7, 1.5e-300, 5e-324, math.MaxFloat64, -math.SmallestNonzeroFloat64, 0.1 + 0.2,
		map[string]any{}, []any{}, map[string]any(nil), []any(nil),
		map[string]any{"z": 1.0, "a": map[string]any{"b": []any{map[string]any{"c": nil}}}, "A": []any{}, "": "empty key", "aa": -0.5},
		map[string]any{"<k>": "a&b", "\u2028": "line\u2029sep", "bad\xffkey": "bad\xfevalue", "é": "ü", "q\"": "\\"},
		[]any{[]any{[]any{}}, map[string]any{"n": 1e-9}, true, false, nil, "x"},
		map[string]any{"raw": json.RawMessage(` { "a" : 1 } `), "n": json.Number("12"), "i": 3, "s": []string{"x"}},
		nested(maxPlainDepth + 5)}
	var entries []Entry
	for _, v := range values {
		entries = append(entries,
			Entry{Type: Tool, Path: "fs/read", Value: v, CallID: "i:n:1"},
			Entry{Type: Core, Path: "fs/read", Value: v, Gen: 2},
			Entry{Type: Core, Path: "fs/\"odd\"", Error: "boom: <x>", Gen: 1},
			Entry{Type: Tool, Path: "fs/read/a/longer/path", Value: v, CallID: "c", Status: "ok"},
			Entry{Type: Tool, Path: "fs/read/a/longer/<path>", Value: v, CallID: "c", Status: "o\"k"},
			Entry{Type: Tool, Path: "fs/read", Value: v, CallID: "c", Status: "ok", Result: v},
			Entry{Type: Tool, Path: "fs/read", Status: "refused", RefusedBy: "floor", Reason: "no", Diagnostics: []string{"d"}},
			// a call a harness left open: its arguments, key and event
			Entry{Type: "tool-open", Key: "toolu_1", Path: "claude/Bash", CallID: "c", Input: v, Value: v,
				Harness: map[string]any{"name": "claude", "event": v}, Guards: []GuardVerdict{{At: "g.lua:2", Verdict: "invoke"}}},
			Entry{Type: "tool-open", Key: "k\"<&>", Input: v, Harness: v, Gen: 2},
			Entry{Type: Tool, Path: "fs/read", CallID: "c", Harness: v})
	}
	entries = append(entries,
		Entry{Type: TurnBegin, Turn: 3, Input: "hi", Status: "ok", Pin: "abc"},
		Entry{Type: RoundEnd, Turn: 1, Round: 2, Output: &out, Continue: true},
		Entry{Type: Emit, Note: &Note{ID: "s:n1", Kind: Ambient, Text: "t"}},
		Entry{Type: TurnEnd, Revs: map[string]int64{"a": 1}},
		Entry{Type: Floor, Path: "fs/read", Value: json.RawMessage(`{"reason":"","refused":false}`)},
		Entry{Type: Delivery, Kind: "lib", Key: "k", Value: "v"},
		// a guarded call's verdicts, on the hand-written path too
		Entry{Type: Tool, Path: "fs/read", Value: "x", CallID: "c", Status: "ok", Result: "x",
			Guards: []GuardVerdict{{At: "g.lua:1", Pattern: "fs/*", Verdict: "invoke"}}},
		Entry{Type: Tool, Path: "fs/read", CallID: "c", Status: "failed", Error: "boom", Gen: 3,
			Guards: []GuardVerdict{{At: "g.lua:2", Verdict: "retry", Reason: "again <now> \xff", Marks: []string{"seen", "q\"x"}},
				{At: "p\u2028.lua:9", Pattern: "fs/**", Verdict: "error", Error: "bad \"x\"", Marks: []string{}, Attempt: 2}}},
		Entry{Type: Tool, Path: "fs/read", CallID: "c", Guards: []GuardVerdict{}},
		Entry{Type: Tool, Path: "fs/read", CallID: "c", Harness: map[string]any{"name": "claude"},
			Guards: []GuardVerdict{{At: "g.lua:1", Verdict: "invoke"}}})
	// one cache across the entries, twice over, as a journal's writes
	// share one: what it remembers changes no encoding
	var rc encCache
	var shared []byte
	for range 2 {
		for _, e := range entries {
			start := len(shared)
			var err error
			if shared, err = appendEntry(shared, &e, &rc); err != nil {
				t.Fatal(err)
			}
			if want, _ := json.Marshal(e); string(shared[start:]) != string(want) {
				t.Errorf("appendEntry(%+v) with a shared cache\n got %s\nwant %s", e, shared[start:], want)
			}
		}
	}
	for _, e := range entries {
		got, err := encodeEntry(&e)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("encodeEntry(%+v)\n got %s\nwant %s", e, got, want)
		}
		var back Entry
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		var wantBack Entry
		_ = json.Unmarshal(want, &wantBack)
		if !reflect.DeepEqual(back, wantBack) {
			t.Errorf("decoded %+v, want %+v", back, wantBack)
		}
	}
}

// Every field of Entry, set alone beside a tool call's fields, encodes as
// encoding/json encodes it: a field added to Entry later cannot be dropped
// by the hand-written encoder.
func TestEncodeEntryEveryField(t *testing.T) {
	typ := reflect.TypeFor[Entry]()
	for k := range typ.NumField() {
		e := Entry{Type: Tool, Path: "fs/read", CallID: "c", Value: "x"}
		f := reflect.ValueOf(&e).Elem().Field(k)
		switch f.Kind() {
		case reflect.String:
			f.SetString("v")
		case reflect.Int, reflect.Int64:
			f.SetInt(7)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Interface:
			f.Set(reflect.ValueOf(any("w")))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Map:
			f.Set(reflect.MakeMap(f.Type()))
		default:
			t.Fatalf("field %s of kind %s: extend this test", typ.Field(k).Name, f.Kind())
		}
		got, err := encodeEntry(&e)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(e)
		if string(got) != string(want) {
			t.Errorf("field %s:\n got %s\nwant %s", typ.Field(k).Name, got, want)
		}
	}
}

// BenchmarkEncodeQuickCall: the three entries a fast-path tool call inside
// a turn journals (the floor's verdict, the core's outcome, the call),
// encoded into a reused buffer as a background write does.
func BenchmarkEncodeQuickCall(b *testing.B) {
	passed := json.RawMessage(`{"reason":"","refused":false}`)
	es := []Entry{
		{Type: Floor, Path: "fs/read", Value: passed},
		{Type: Core, Path: "fs/read", Value: "x"},
		{Type: Tool, Path: "fs/read", Value: "x", CallID: "bench/main:c123456", Status: "ok", Result: "x"},
	}
	benchEncode(b, es)
}

// plain, eight bytes at a time, agrees with encoding/json on every byte at
// every place of strings of every length up to 17.
func TestPlainEveryByte(t *testing.T) {
	for n := 1; n <= 17; n++ {
		for at := range n {
			for c := range 256 {
				s := []byte(strings.Repeat("a", n))
				s[at] = byte(c)
				want, _ := json.Marshal(string(s))
				isPlain := string(want) == `"`+string(s)+`"`
				if got := plain(string(s)); got != isPlain {
					t.Fatalf("plain(%q) = %v, want %v", s, got, isPlain)
				}
			}
		}
	}
}

// BenchmarkEncodeMapCall: a tool call whose argument is a map of four keys
// and whose result is a map, as an MCP tool call journals it.
func BenchmarkEncodeMapCall(b *testing.B) {
	args := map[string]any{"path": "/srv/data/report.txt", "offset": 0.0, "limit": 4096.0, "follow": true}
	result := map[string]any{"content": []any{map[string]any{"type": "text", "text": "hello, world"}}, "isError": false}
	es := []Entry{
		{Type: Tool, Path: "fs/read", Value: args, CallID: "bench/main:c123456", Status: "ok", Result: result},
	}
	benchEncode(b, es)
}

// nested is a value n maps and lists deep, alternately.
func nested(n int) any {
	var v any = "leaf"
	for k := range n {
		if k%2 == 0 {
			v = map[string]any{"k": v, "<": k}
		} else {
			v = []any{v, float64(k)}
		}
	}
	return v
}

// A value that holds itself gives encoding/json's error, not a crash: the
// encoder's own recursion stops and hands the rest to encoding/json.
func TestEncodeCyclicValue(t *testing.T) {
	m := map[string]any{"a": 1.0}
	m["self"] = m
	l := []any{"x", nil}
	l[1] = map[string]any{"l": l}
	for _, v := range []any{m, l, []any{m}} {
		_, want := json.Marshal(v)
		if want == nil {
			t.Fatal("json.Marshal encoded a cycle")
		}
		_, err := encodeEntry(&Entry{Type: Tool, Path: "fs/read", Value: v, CallID: "c"})
		if err == nil || err.Error() != want.Error() {
			t.Errorf("encodeEntry of a cycle: error %v, want %v", err, want)
		}
		var ue *json.UnsupportedValueError
		if !errors.As(err, &ue) {
			t.Errorf("error %T, want *json.UnsupportedValueError", err)
		}
	}
}

// A value encoding/json refuses (NaN, infinities, anywhere inside) stops
// the entry with the error json.Marshal gives.
func TestEncodeUnsupportedValue(t *testing.T) {
	for _, v := range []any{math.NaN(), math.Inf(1), map[string]any{"a": []any{1.0, math.Inf(-1)}},
		[]any{map[string]any{"n": math.NaN()}}, map[string]any{"c": make(chan int)}} {
		_, want := json.Marshal(v)
		if want == nil {
			t.Fatalf("json.Marshal(%v) gave no error", v)
		}
		for _, e := range []Entry{{Type: Tool, Path: "p", Value: v}, {Type: Tool, Path: "p", Value: "x", Result: v}} {
			if _, err := encodeEntry(&e); err == nil || err.Error() != want.Error() {
				t.Errorf("encodeEntry(%v): error %v, want %v", v, err, want)
			}
		}
	}
}

// FuzzEncodeValue builds a plain value (maps, lists, strings, numbers,
// booleans, nil, nested) from the input and checks its entry encodes as
// json.Marshal encodes it, byte for byte.
func FuzzEncodeValue(f *testing.F) {
	f.Add([]byte("m\x02ka\x00sx\x04b<>&"))
	f.Add([]byte("l\x03n\x00\x00\x00\x00\x00\x00\xf0\x3ftzs\x06\xe2\x80\xa8\xff\xe2\x80\xa9"))
	f.Add([]byte("m\x01\x03<&>m\x01\x00l\x00"))
	f.Add([]byte("n\x00\x00\x00\x00\x00\x00\x00\x80"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{data: data}
		v := r.value(0)
		want, err := json.Marshal(v)
		if err != nil {
			return // NaN or infinity: TestEncodeUnsupportedValue
		}
		got, err := encodeEntry(&Entry{Type: Tool, Path: "p", Value: v, Result: v})
		if err != nil {
			t.Fatalf("encodeEntry(%#v): %v", v, err)
		}
		wantEntry := `{"t":"tool","value":` + string(want) + `,"path":"p","result":` + string(want) + `}`
		if v == nil {
			wantEntry = `{"t":"tool","path":"p"}`
		}
		if string(got) != wantEntry {
			t.Fatalf("encodeEntry(%#v)\n got %s\nwant %s", v, got, wantEntry)
		}
		if w, _ := json.Marshal(Entry{Type: Tool, Path: "p", Value: v, Result: v}); string(w) != wantEntry {
			t.Fatalf("json.Marshal of the entry: %s, want %s", w, wantEntry)
		}
	})
}

// fuzzReader reads a plain value from fuzz input: a tag byte (m map, l
// list, s string, n number, t true, f false, anything else nil), then a
// length byte and the elements, or the string's bytes, or the number's
// eight bytes.
type fuzzReader struct {
	data []byte
}

func (r *fuzzReader) byte() byte {
	if len(r.data) == 0 {
		return 0
	}
	c := r.data[0]
	r.data = r.data[1:]
	return c
}

func (r *fuzzReader) bytes(n int) []byte {
	n = min(n, len(r.data))
	b := r.data[:n]
	r.data = r.data[n:]
	return b
}

func (r *fuzzReader) value(depth int) any {
	if depth > 2*maxPlainDepth {
		return "deep"
	}
	switch r.byte() {
	case 'm':
		n := int(r.byte() % 8)
		m := make(map[string]any, n)
		for range n {
			k := string(r.bytes(int(r.byte() % 8)))
			m[k] = r.value(depth + 1)
		}
		return m
	case 'l':
		n := int(r.byte() % 8)
		l := make([]any, 0, n)
		for range n {
			l = append(l, r.value(depth+1))
		}
		return l
	case 's':
		return string(r.bytes(int(r.byte() % 16)))
	case 'n':
		var u uint64
		for k, c := range r.bytes(8) {
			u |= uint64(c) << (8 * k)
		}
		return math.Float64frombits(u)
	case 'i':
		return float64(int8(r.byte()))
	case 't':
		return true
	case 'f':
		return false
	}
	return nil
}

// benchEncode encodes es again and again into one reused buffer, as a
// background write does.
func benchEncode(b *testing.B, es []Entry) {
	var buf []byte
	var rc encCache
	b.ReportAllocs()
	for b.Loop() {
		buf = buf[:0]
		for k := range es {
			var err error
			if buf, err = appendEntry(buf, &es[k], &rc); err != nil {
				b.Fatal(err)
			}
		}
	}
}
