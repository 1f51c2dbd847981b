package mcpproxy

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

var jsonSeeds = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e3`, `-12.25E-2`, `1e400`, `01`, `1.`, `.5`, `-`, `+1`,
	`"a"`, `"a\"b"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\x"`, "\"\xff\xfe\"", "\"tab\there\"", `"é"`,
	`{"a":1,"a":2}`, `{"a":[1,{"b":null}],"c":"d"}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`, `{a:1}`,
	` {"x" : [ true , false ] } `, `{"x":1} x`, `{"x":1}{}`, `"unterminated`, `[[[[[]]]]]`, `tru`, `nul`,
	`{"content":[{"type":"text","text":"a small file\n"}],"structuredContent":{"content":"a small file\n"}}`,
	`"\ud800\u0041"`, `"\udc00"`, `"\ud83d\ude00x"`, `"\ud83d"`, `"\ud83d\u"`, `"a\/b\b\f\n\r\t\\"`, `"\'"`, `"\u00"`,
	"\"\xed\xa0\x80 \xc3\"", `{"\u0061":1,"a\n":[]}`, `{"k":"v\"}`, `"\u0000"`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

// parseAny and validJSON agree with encoding/json: the same value, and
// never a success where encoding/json fails.
func FuzzParseAnyAsEncodingJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want any
		werr := json.Unmarshal(data, &want)
		got, ok := parseAny(data)
		if ok && werr != nil {
			t.Fatalf("%q: parsed %#v, encoding/json: %v", data, got, werr)
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %#v, encoding/json %#v", data, got, want)
		}
		if validJSON(data) && !json.Valid(data) {
			t.Fatalf("%q: valid, json.Valid says not", data)
		}
	})
}

// decodeMessage's fast path gives what encoding/json gives (the slow path,
// kept for every message the fast one leaves).
func FuzzFastWireAsEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"n":[1,2]}}}`,
		`{"jsonrpc":"2.0","id":"a","result":{"content":[]}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":null}`,
		`{"jsonrpc":"2.0","id":null,"method":null}`,
		`{"jsonrpc":"2.0","ID":1,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"Method":"x","method":"y"}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","extra":[1,{"y":"\u0041"}]}`,
		`{"jsonrpc":"2.\u0030","id":1,"method":"x"}`,
		`{"jsonrpc":"2.0","id":{},"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1}} `,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1}}x`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"m\xc3\xa9thod\":\"x\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want wireMessage
		werr := json.Unmarshal(data, &want)
		var got wireMessage
		if !fastWire(data, &got) {
			return
		}
		if werr != nil {
			t.Fatalf("%q: fast %+v, encoding/json: %v", data, got, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: fast %+v, encoding/json %+v", data, got, want)
		}
	})
}

// fastCallParams gives what encoding/json gives for tools/call's params,
// and the arguments' text as it was sent.
func FuzzFastCallParamsAsEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"name":"read_text_file","arguments":{"path":"/tmp/x"}}`,
		`{"name":"t","arguments":{"a":[1,2,{"b":null}]},"_meta":{"progressToken":1}}`,
		`{"name":"t"}`, `{"name":null,"arguments":null,"_meta":null}`, `{"Name":"t"}`, `{"name":"t","NAME":"u"}`,
		`{"name":"t","arguments":{"p":"a","p":"b"}}`, `{"name":"t","arguments":{"o":{"p":1,"\u0070":2}}}`, `{"name":"t","name":"u"}`,
		`{"name":"t","arguments":{"n":9007199254740993}}`, `{"name":"t","arguments":{"n":1.0,"s":"\ud800"}}`, "{\"name\":\"t\",\"arguments\":{\"s\":\"\xff\"}}",
		`{"name":"t\u0041"}`, `{"name":1}`, `{"name":"t","arguments":[1]}`, `{"name":"t","_Meta":{}}`, `[]`, `{"name":"t",}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want callParams
		werr := json.Unmarshal(data, &want)
		var got callParams
		raw, faithful, ok, err := fastCallParams(data, &got)
		if err != nil {
			if werr == nil && !hasDup(data) {
				t.Fatalf("%q: refused (%v), and no member is named twice", data, err)
			}
			return
		}
		if !ok {
			return
		}
		if hasDup(data) {
			t.Fatalf("%q: a member named twice was not refused", data)
		}
		if faithful && raw != nil && !faithfulText(raw) {
			t.Fatalf("%q: the arguments' text %q is not what their value encodes as, yet called faithful", data, raw)
		}
		if werr != nil {
			t.Fatalf("%q: fast %+v, encoding/json: %v", data, got, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: fast %#v, encoding/json %#v", data, got, want)
		}
		var args any
		if raw != nil && (json.Unmarshal(raw, &args) != nil || !reflect.DeepEqual(args, want.Arguments)) {
			t.Fatalf("%q: the arguments' text %q is not what encoding/json read", data, raw)
		}
	})
}

// The fast paths take the usual messages (else they would save nothing).
func TestFastPathsTakeUsualMessages(t *testing.T) {
	var w wireMessage
	if !fastWire([]byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/w/small.txt"}}}`), &w) {
		t.Error("a tools/call request went to encoding/json")
	}
	if !fastWire([]byte(`{"result":{"content":[{"type":"text","text":"a small file\n"}]},"jsonrpc":"2.0","id":3}`), &w) {
		t.Error("a result went to encoding/json")
	}
	var c callParams
	if _, faithful, ok, _ := fastCallParams([]byte(`{"name":"read_text_file","arguments":{"path":"/w/small.txt"},"_meta":{"progressToken":4}}`), &c); !ok || !faithful {
		t.Error("tools/call params went to encoding/json")
	}
	if _, ok := parseAny([]byte(`{"content":[{"type":"text","text":"a small file\n"}]}`)); !ok {
		t.Error("a result with an escape went to encoding/json")
	}
}

// The JSON of one tools/call (the client's request, its params, the
// upstream's answer and its result), read the fast way and with
// encoding/json, in the same run.
//
//	go test ./mcpproxy -run XXX -bench DecodeToolCall
func BenchmarkDecodeToolCall(b *testing.B) {
	req := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/tmp/BenchmarkToolCall123/001/work/small.txt"},"_meta":{"progressToken":12}}}`)
	ans := []byte(`{"result":{"content":[{"type":"text","text":"a small file\n"}],"structuredContent":{"content":"a small file\n"}},"jsonrpc":"2.0","id":3}`)
	slow := func() {
		var w wireMessage
		_ = json.Unmarshal(req, &w)
		var c callParams
		_ = json.Unmarshal(w.Params, &c)
		var a wireMessage
		_ = json.Unmarshal(ans, &a)
		var m map[string]any
		_ = json.Unmarshal(a.Result, &m)
	}
	fast := func() {
		var w wireMessage
		fastWire(req, &w)
		var c callParams
		if _, _, ok, _ := fastCallParams(w.Params, &c); !ok {
			b.Fatal("params")
		}
		var a wireMessage
		fastWire(ans, &a)
		if m, _ := decodeObject(a.Result); m == nil {
			b.Fatal("result")
		}
	}
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			slow()
		}
	})
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			fast()
		}
	})
}

// hasDup reports whether some object of data names a member twice, by
// encoding/json's token reader.
func hasDup(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		obj  bool
		key  bool // the next string is a name
		seen map[string]bool
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

// faithfulText reports whether raw says what its value says: each number
// written as encoding/json writes its float64, and UTF-8 throughout.
func faithfulText(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	var asText, asFloat any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&asText) != nil || json.Unmarshal(raw, &asFloat) != nil {
		return false
	}
	a, _ := json.Marshal(asText)
	b, _ := json.Marshal(asFloat)
	return bytes.Equal(a, b)
}
