package pin

import (
	"encoding/json"
	"reflect"
	"testing"
)

var pinCases = []string{
	`{"bot":"main","programs":[{"name":"g","file":"g.lua","pack":"/tmp/p","pack_id":"p","sha256":"d093","config":"4413"}]}`,
	`{"bot":"b","programs":[],"commands":[{"name":"c","file":"commands/c.scm","pack":"p","sha256":"s"},null]}`,
	`{"bot":"b","programs":null}`, `{}`, `{"programs":[{"name":"x","extra":[1,{"a":2}]}]}`,
	`{"Bot":"b"}`, `{"bot":"\u0062"}`, `{"bot":"ü"}`, `{"bot":1}`, `{"programs":{}}`, `{"programs":[1]}`,
	`{"programs":[{"Name":"x"}]}`, `{"programs":[{"name":"a","name":"b"}]}`, `{"bot":"a","bot":"b"}`,
	``, `[]`, `null`, `{"bot":"b"`, `{"programs":[{"name":"x"},]}`,
}

// readPin gives what json.Unmarshal gives (or leaves the text to it).
func TestReadPinAsEncodingJSON(t *testing.T) {
	for _, c := range pinCases {
		checkPin(t, []byte(c))
	}
	for _, c := range pinCases[:3] { // what attune stores: read here, not by encoding/json
		if !readPin([]byte(c), &Pin{}) {
			t.Errorf("%s: left to encoding/json", c)
		}
	}
}

func FuzzReadPin(f *testing.F) {
	for _, c := range pinCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkPin(t, data) })
}

func checkPin(t *testing.T, data []byte) {
	t.Helper()
	var want, got Pin
	werr := json.Unmarshal(data, &want)
	if !readPin(data, &got) {
		return // encoding/json's to read
	}
	if werr != nil {
		t.Fatalf("%q: read, encoding/json fails: %v", data, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: read\n%#v\nencoding/json\n%#v", data, got, want)
	}
}
