package harness

import (
	"encoding/json"
	"reflect"
	"testing"
)

// sample sets field k of the struct v points to to a value of its type
// that is not zero.
func sample(t *testing.T, v reflect.Value, k int) {
	t.Helper()
	f := v.Elem().Field(k)
	msg := "a \"quoted\" <ü> \u2028 text"
	switch f.Kind() {
	case reflect.String:
		f.SetString(msg)
	case reflect.Int:
		f.SetInt(3)
	case reflect.Bool:
		f.SetBool(true)
	case reflect.Map:
		f.Set(reflect.ValueOf(map[string]any{"command": "go test", "n": 2.5, "list": []any{"a", nil, true}, "empty": map[string]any{}}))
	case reflect.Interface:
		f.Set(reflect.ValueOf(any(map[string]any{"stdout": "ok", "lines": []any{1.0, 2.0}})))
	case reflect.Pointer:
		f.Set(reflect.ValueOf(&msg))
	default:
		t.Fatalf("field %s of %s: no sample of kind %s", v.Elem().Type().Field(k).Name, v.Elem().Type(), f.Kind())
	}
}

// The hand-off's event encoding reads back, on the server, as the event:
// every field of Event, set alone and all together.
func TestHandOffEventEncoding(t *testing.T) {
	typ := reflect.TypeFor[Event]()
	all := reflect.New(typ)
	check := func(ev Event, what string) {
		data, err := eventJSON(ev)
		if err != nil {
			t.Fatal(err)
		}
		var got, want Event
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		wdata, _ := json.Marshal(ev)
		json.Unmarshal(wdata, &want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: read back as\n%#v\nwant\n%#v", what, got, want)
		}
	}
	for k := range typ.NumField() {
		one := reflect.New(typ)
		sample(t, one, k)
		sample(t, all, k)
		check(one.Elem().Interface().(Event), typ.Field(k).Name)
	}
	check(all.Elem().Interface().(Event), "every field")
	check(Event{ToolInput: map[string]any{}}, "an empty input")
}

// The hook process reads the server's answer and reply header as
// json.Unmarshal does: every field of Answer, set alone and together.
func TestHandOffAnswerDecoding(t *testing.T) {
	typ := reflect.TypeFor[Answer]()
	all := reflect.New(typ)
	check := func(data []byte, what string) {
		var want Answer
		werr := json.Unmarshal(data, &want)
		got, err := readAnswer(data)
		if (err == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %q read as %#v (%v), want %#v (%v)", what, data, got, err, want, werr)
		}
	}
	for k := range typ.NumField() {
		one := reflect.New(typ)
		sample(t, one, k)
		sample(t, all, k)
		data, _ := json.Marshal(one.Interface())
		check(data, typ.Field(k).Name)
	}
	data, _ := json.Marshal(all.Interface())
	check(data, "every field")
	for _, c := range []string{`{}`, `{"decision":"allow"}`, `{"Halt":1}`, `{"UpdatedInput":[1]}`, `{"UpdatedOutput":null}`, `{"Reason":"\u00e9"}`, `{`, ``} {
		check([]byte(c), c)
	}
	for _, rep := range []warmReply{{OK: true, Ident: "abc", Size: 42}, {Why: "not \"this\" one"}, {}} {
		line, _ := json.Marshal(rep)
		if got, err := readReply(line); err != nil || got != rep {
			t.Fatalf("reply %s read as %+v (%v)", line, got, err)
		}
	}
	q := warmRequest{V: warmVersion, Dialect: "claude", Config: "/a \"b\"/ü\n.toml", Ident: "x"}
	var back warmRequest
	want, _ := json.Marshal(q)
	if got := requestJSON(q); string(got) != string(want) || json.Unmarshal(got, &back) != nil || back != q {
		t.Fatalf("request %s, want %s", got, want)
	}
}
