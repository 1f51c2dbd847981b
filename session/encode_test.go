package session

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// encodeEntry writes what json.Marshal writes, byte for byte, for every
// shape of entry (the journal's readers decode either).
func TestEncodeEntryMatchesJSON(t *testing.T) {
	out := "o"
	values := []any{nil, "x", "", "quote\" and \\ and \n", "ünïcode", "<a&b>", "bad \xff utf-8", true, false,
		0.0, 1.0, -3.0, 0.5, 1e21, 123456789012345.0, math.MaxInt32 * 4.0,
		map[string]any{"path": "/a", "n": 2.0, "ok": true}, []any{"a", 1.0, nil}}
	var entries []Entry
	for _, v := range values {
		entries = append(entries,
			Entry{Type: Tool, Path: "fs/read", Value: v, CallID: "i:n:1"},
			Entry{Type: Core, Path: "fs/read", Value: v, Gen: 2},
			Entry{Type: Core, Path: "fs/\"odd\"", Error: "boom: <x>", Gen: 1},
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
