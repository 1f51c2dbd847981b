package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeAsEncodingJSON holds Decode and Valid to encoding/json: never
// a success where it fails, the same value; a DupError only for an object
// that names a member twice; Lossy false only when the text says what the
// value says.
func FuzzDecodeAsEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `null`, `true`, `0`, `-0`, `1.5e3`, `1e400`, `01`, `1.`, `"a\"b"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`,
		"\"\xff\"", `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"a":[1,{"b":null,"b":1}]}`, `{"a":1,}`, `[1 2]`, `9007199254740993`,
		`1.0`, `1e2`, `{"k":"v"} x`, strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		`{"a":0,"b":1,"c":2,"d":3,"e":4,"f":5,"g":6,"h":7,"i":8,"j":9,"a":10}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want any
		werr := json.Unmarshal(data, &want)
		got, res, err := Decode(data, Options{})
		if err == nil && werr != nil {
			t.Fatalf("%q: decoded %#v, encoding/json: %v", data, got, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %#v, encoding/json %#v", data, got, want)
		}
		if err == nil && !res.Lossy {
			var asText any
			d := json.NewDecoder(bytes.NewReader(data))
			d.UseNumber()
			_ = d.Decode(&asText)
			a, _ := json.Marshal(asText)
			b, _ := json.Marshal(want)
			if !utf8.Valid(data) || !bytes.Equal(a, b) {
				t.Fatalf("%q: not lossy, yet its value encodes as %s", data, b)
			}
		}
		if ok, _ := Valid(data, Options{}); ok && !json.Valid(data) {
			t.Fatalf("%q: valid, json.Valid says not", data)
		}
		_, _, derr := Decode(data, Options{Dups: true})
		_, verr := Valid(data, Options{Dups: true})
		var dup *DupError
		if (errors.As(derr, &dup) || errors.As(verr, &dup)) && werr == nil && !hasDup(data) {
			t.Fatalf("%q: a duplicate %v where there is none", data, dup)
		}
		if werr == nil && hasDup(data) && !strings.Contains(string(data), strings.Repeat("[", MaxDepth)) {
			if !errors.As(derr, &dup) {
				t.Fatalf("%q: Decode missed a duplicate (%v)", data, derr)
			}
			if !errors.As(verr, &dup) {
				t.Fatalf("%q: Valid missed a duplicate (%v)", data, verr)
			}
		}
	})
}

// hasDup reports whether some object of data names a member twice, by
// encoding/json's token reader.
func hasDup(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		obj, key bool
		seen     map[string]bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.key {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			k := tok.(string)
			if top.seen[k] {
				return true
			}
			top.seen[k], top.key = true, false
			continue
		}
		if top != nil && top.obj {
			top.key = true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, key: true, seen: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

// Members slices out the fields asked for, gives up where encoding/json
// could read otherwise, and refuses a name given twice with Dups.
func TestMembers(t *testing.T) {
	fields := []string{"id", "method"}
	for in, want := range map[string]string{
		`{"id":1.5,"method":"x","p":[1]}`: `1.5|"x"`,
		`{"method":"x"}`:                  `|"x"`,
		`{"ID":1}`:                        "give up",
		`{"\u0069d":1}`:                   "give up",
		`{"id":1,"id":2}`:                 "give up",
		`{"id":1,"p":{"a":1,"a":2}}`:      "give up",
		`{"id":1} x`:                      "give up",
	} {
		var out [2][]byte
		ok, err := Members([]byte(in), fields, out[:], Options{})
		got := "give up"
		if ok && err == nil {
			got = string(out[0]) + "|" + string(out[1])
		}
		if in == `{"id":1,"p":{"a":1,"a":2}}` {
			want = `1|` // without Dups a repeat inside a value is encoding/json's business
		}
		if got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	for _, in := range []string{`{"id":1,"id":2}`, `{"id":1,"p":{"a":1,"a":2}}`, `{"\u0069d":1,"id":2}`, `{"p":[{"x":1,"\u0078":2}]}`} {
		var out [2][]byte
		_, err := Members([]byte(in), fields, out[:], Options{Dups: true})
		var dup *DupError
		if !errors.As(err, &dup) {
			t.Errorf("%s: %v, want a DupError", in, err)
		}
	}
}
