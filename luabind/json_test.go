package luabind

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	lua "github.com/attune-dev/attune/internal/lua"
)

// jsonDepth is how deep a document's arrays and objects nest (strings
// skipped), so the fuzz test can tell the decoder's depth limit apart.
func jsonDepth(b []byte) int {
	depth, most, inStr := 0, 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			depth++
			most = max(most, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return most
}

// sameAsJSON says how the Lua value lv differs from encoding/json's value
// want ("" when it does not). Lua holds no nil in a table: a null member or
// element is an absent key.
func sameAsJSON(st *State, lv lua.LValue, want any, path string) string {
	switch w := want.(type) {
	case nil:
		if lv != lua.LNil {
			return fmt.Sprintf("%s: got %v, want nil", path, lv)
		}
	case bool:
		if lv != lua.LBool(w) {
			return fmt.Sprintf("%s: got %v, want %v", path, lv, w)
		}
	case float64:
		n, ok := lv.(lua.LNumber)
		if !ok || float64(n) != w {
			return fmt.Sprintf("%s: got %v, want %v", path, lv, w)
		}
	case string:
		s, ok := lv.(lua.LString)
		if !ok || string(s) != w {
			return fmt.Sprintf("%s: got %q, want %q", path, lv, w)
		}
	case []any:
		t, ok := lv.(*lua.LTable)
		if !ok {
			return fmt.Sprintf("%s: got %v, want a list", path, lv)
		}
		if len(w) == 0 && t.Metatable != st.ListMeta {
			return fmt.Sprintf("%s: an empty list is not marked a list", path)
		}
		set := 0
		for i, e := range w {
			if e != nil {
				set++
			}
			if d := sameAsJSON(st, t.RawGetInt(i+1), e, fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		if n := count(t); n != set {
			return fmt.Sprintf("%s: %d keys, want %d", path, n, set)
		}
	case map[string]any:
		t, ok := lv.(*lua.LTable)
		if !ok {
			return fmt.Sprintf("%s: got %v, want an object", path, lv)
		}
		set := 0
		for k, e := range w {
			if e != nil {
				set++
			}
			if d := sameAsJSON(st, t.RawGetString(k), e, path+"."+k); d != "" {
				return d
			}
		}
		if n := count(t); n != set {
			return fmt.Sprintf("%s: %d keys, want %d", path, n, set)
		}
	default:
		return fmt.Sprintf("%s: unexpected %T", path, want)
	}
	return ""
}

func count(t *lua.LTable) int {
	n := 0
	t.ForEach(func(_, v lua.LValue) {
		if v != lua.LNil {
			n++
		}
	})
	return n
}

// FuzzDecode holds the JSON decoder to encoding/json: the same documents
// accepted (bytes after the document refused) and the same values.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"rev":1,"action":{"type":"add","by":2}}`,
		`{"b":1,"a":2,"a":3}`, `[1,null,3]`, `{"a":null}`, `[]`, `{}`, `[[],{}]`,
		`"quote \" back \\ slash \/ \b\f\n\r\t \u00e9 \ud83d\ude00 \ud800 \udc00x"`,
		"\"\xff\xfe invalid\"", "\"ctl \x01\"", `"é😀"`,
		`0`, `-0`, `01`, `1.`, `.5`, `-`, `1e5`, `1E+5`, `1e-5`, `-12.5e3`, `1e400`, `123456789012345678`, `0.1`,
		`true`, `false`, `null`, `nul`, `truex`, `1 2`, `{} x`, ` [ 1 , 2 ] `, "\t\n\r1\n",
		`{"a":}`, `{"a" 1}`, `{1:2}`, `[1,]`, `{"a":1,}`, `"\u12"`, `"\x"`, `"abc`, ``, ` `,
		strings.Repeat("[", 102) + strings.Repeat("]", 102), strings.Repeat("[", 101) + strings.Repeat("]", 101),
	} {
		f.Add([]byte(s))
	}
	st := NewState(Options{})
	defer st.Close()
	d := NewJSONDecoder(st)
	f.Fuzz(func(t *testing.T, b []byte) {
		var want any
		wantErr := json.Unmarshal(b, &want)
		got, err := d.Decode(b)
		if jsonDepth(b) > maxJSONDepth+1 && wantErr == nil {
			if err == nil || !strings.Contains(err.Error(), "nested too deep") {
				t.Fatalf("%q: nested %d deep, decoded (%v)", b, jsonDepth(b), err)
			}
			return
		}
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: decoder error %v, encoding/json error %v", b, err, wantErr)
		}
		if err != nil {
			return
		}
		if diff := sameAsJSON(st, got, want, "$"); diff != "" {
			t.Fatalf("%q: %s", b, diff)
		}
		// an object's members come out in document order, repeats included
		if bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("{")) {
			ms, err := d.DecodeMembers(b, nil)
			if err != nil {
				t.Fatalf("%q: members: %v", b, err)
			}
			m := want.(map[string]any)
			for _, mem := range ms {
				if _, ok := m[mem.Key]; !ok {
					t.Fatalf("%q: member %q not in encoding/json's object", b, mem.Key)
				}
			}
		}
	})
}

// Trailing bytes, numbers JSON does not write and raw control characters
// are refused, with the byte offset in the error.
func TestDecodeRefuses(t *testing.T) {
	st := NewState(Options{})
	defer st.Close()
	d := NewJSONDecoder(st)
	for in, want := range map[string]string{
		`{} x`:       "bad JSON at byte 3: unexpected 'x' after the document",
		`1 2`:        "bad JSON at byte 2: unexpected '2' after the document",
		`01`:         "bad JSON at byte 1: unexpected '1' after the document",
		`1.`:         "bad JSON at byte 2: bad number",
		"\"a\x01\"":  "bad JSON at byte 2: control character in a string",
		`{"a":1} {}`: "bad JSON at byte 8: unexpected '{' after the document",
	} {
		_, err := d.Decode([]byte(in))
		if err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", in, err, want)
		}
	}
	if _, err := d.DecodeMembers([]byte(`{"rev":1,"action":2}x`), nil); err == nil {
		t.Error("DecodeMembers accepted trailing bytes")
	}
	if v, err := d.Decode([]byte(`123456789012345`)); err != nil || v != lua.LNumber(123456789012345) {
		t.Error(v, err)
	}
	if v, err := d.Decode([]byte(`-1e308`)); err != nil || v != lua.LNumber(-1e308) {
		t.Error(v, err)
	}
	if _, err := d.Decode([]byte(`1e400`)); err == nil {
		t.Error("1e400 decoded", math.Inf(1))
	}
}
