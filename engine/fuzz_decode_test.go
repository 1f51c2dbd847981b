package engine

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/attune-dev/attune/luabind"
)

// FuzzDecodeEntry: the owner log's JSON decoder never panics, refuses what
// encoding/json refuses, and reads what it accepts as encoding/json does
// (the same action, in Lua). CI runs it for a few seconds (.ci/run).
func FuzzDecodeEntry(f *testing.F) {
	for _, seed := range []string{
		`{"rev":1,"action":{"type":"put","key":"m1","body":"x","n":1.5,"l":[1,2,{"a":null}],"t":true}}`,
		`{"rev":2,"action":{"type":"\u00e9\ud83d\ude00","s":"a\"b\\c\n"}}`,
		`{"reset":true}`, `{"rev":1}`, `{"rev":1,"action":[]}`, `{`, `{"rev":1,"action":{"a":1e400}}`,
		`{"rev":1,"action":{"a":"\ud800"}}`, `{"rev":-1,"action":{}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st := luabind.NewState(luabind.Options{})
		defer st.Close()
		rev, v, err := decodeEntry(st, data)
		var ref struct {
			Rev    *int `json:"rev"`
			Action any  `json:"action"`
		}
		if err != nil || !json.Valid(data) || json.Unmarshal(data, &ref) != nil || ref.Rev == nil {
			return
		}
		if rev != *ref.Rev {
			t.Fatalf("rev %d, encoding/json reads %d", rev, *ref.Rev)
		}
		got, cerr := st.FromLua(v)
		if cerr != nil {
			return // not canonical data (NaN, invalid UTF-8): refused on the way out
		}
		want, ok := normalize(ref.Action)
		if !ok {
			return // a null in a list: Lua has no such list
		}
		if g, _ := normalize(got); !reflect.DeepEqual(g, want) {
			t.Fatalf("action %#v, encoding/json reads %#v", got, ref.Action)
		}
	})
}

// normalize makes an empty list and an empty map equal and drops null
// fields (Lua cannot tell them apart); ok is false for a list holding null.
func normalize(v any) (any, bool) {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return map[string]any{}, true
		}
		out := make([]any, len(x))
		for k, e := range x {
			if e == nil {
				return nil, false
			}
			n, ok := normalize(e)
			if !ok {
				return nil, false
			}
			out[k] = n
		}
		return out, true
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if e == nil {
				continue
			}
			n, ok := normalize(e)
			if !ok {
				return nil, false
			}
			out[k] = n
		}
		return out, true
	}
	return v, true
}
