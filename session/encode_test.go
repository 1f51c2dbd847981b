package session

import (
	"encoding/json"
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
		"long string with a quote \" past eight bytes", "long string, <html> past eight bytes", "tab\tand more than eight bytes"}
	var entries []Entry
	for _, v := range values {
		entries = append(entries,
			Entry{Type: Tool, Path: "fs/read", Value: v, CallID: "i:n:1"},
			Entry{Type: Core, Path: "fs/read", Value: v, Gen: 2},
			Entry{Type: Core, Path: "fs/\"odd\"", Error: "boom: <x>", Gen: 1},
			Entry{Type: Tool, Path: "fs/read/a/longer/path", Value: v, CallID: "c", Status: "ok"},
			Entry{Type: Tool, Path: "fs/read/a/longer/<path>", Value: v, CallID: "c", Status: "o\"k"},
			Entry{Type: Tool, Path: "fs/read", Value: v, CallID: "c", Status: "ok", Result: v},
			Entry{Type: Tool, Path: "fs/read", Status: "refused", RefusedBy: "floor", Reason: "no", Diagnostics: []string{"d"}})
	}
	entries = append(entries,
		Entry{Type: TurnBegin, Turn: 3, Input: "hi", Status: "ok", Pin: "abc"},
		Entry{Type: RoundEnd, Turn: 1, Round: 2, Output: &out, Continue: true},
		Entry{Type: Emit, Note: &Note{ID: "s:n1", Kind: Ambient, Text: "t"}},
		Entry{Type: TurnEnd, Revs: map[string]int64{"a": 1}},
		Entry{Type: Floor, Path: "fs/read", Value: json.RawMessage(`{"reason":"","refused":false}`)},
		Entry{Type: Delivery, Kind: "lib", Key: "k", Value: "v"})
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
