package jsonscan

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Each Into reader agrees with encoding/json wherever it says it decided:
// the same value, and an absent or null member leaves the field as it is.
func TestIntoAsEncodingJSON(t *testing.T) {
	members := []string{"", "null", `"x"`, `""`, `"a\nb"`, `"é"`, "0", "-7", "12", "1.5", "1e3",
		"9223372036854775807", "9223372036854775808", "true", "false", `[1,"a"]`, `{"k":null}`, `"true"`}
	for _, m := range members {
		var raw []byte
		doc := `{}`
		if m != "" {
			raw = []byte(m)
			doc = `{"v":` + m + `}`
		}
		check := func(name string, got, want any, ok bool, jerr error) {
			t.Helper()
			if ok && (jerr != nil || !reflect.DeepEqual(got, want)) {
				t.Errorf("%s(%s) = %#v, encoding/json %#v (%v)", name, m, got, want, jerr)
			}
		}
		{
			s, w := struct{ V string }{"old"}, struct{ V string }{"old"}
			ok := IntoString(raw, &s.V)
			check("IntoString", s, w, ok, json.Unmarshal([]byte(doc), &w))
		}
		{
			s, w := struct{ V int }{5}, struct{ V int }{5}
			ok := IntoInt(raw, &s.V)
			check("IntoInt", s, w, ok, json.Unmarshal([]byte(doc), &w))
		}
		{
			s, w := struct{ V int64 }{5}, struct{ V int64 }{5}
			ok := IntoInt64(raw, &s.V)
			check("IntoInt64", s, w, ok, json.Unmarshal([]byte(doc), &w))
		}
		{
			s, w := struct{ V bool }{true}, struct{ V bool }{true}
			ok := IntoBool(raw, &s.V)
			check("IntoBool", s, w, ok, json.Unmarshal([]byte(doc), &w))
		}
		{
			s, w := struct{ V any }{"old"}, struct{ V any }{"old"}
			ok := IntoAny(raw, &s.V)
			if ok && m != "" && m != "null" {
				// Decode gives numbers as encoding/json with UseNumber does not: compare through JSON
				a, _ := json.Marshal(s.V)
				var back any
				json.Unmarshal(a, &back)
				s.V = back
			}
			check("IntoAny", s, w, ok, json.Unmarshal([]byte(doc), &w))
		}
	}
	// the readers decide the plain cases themselves
	var s string
	var n int
	var b bool
	if !IntoString([]byte(`"x"`), &s) || s != "x" || !IntoInt([]byte("-7"), &n) || n != -7 || !IntoBool([]byte("false"), &b) {
		t.Fatal("a plain member was left to encoding/json")
	}
	if IntoString([]byte("1"), &s) || IntoInt([]byte("1.5"), &n) || IntoBool([]byte(`"true"`), &b) {
		t.Fatal("a member of another type was taken")
	}
}
