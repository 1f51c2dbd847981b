package mcpproxy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeMessage agrees with the SDK's jsonrpc.DecodeMessage on good and
// bad messages.
func TestDecodeMessageAsSDK(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{"n":[1,2]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no","data":{"x":1}}}`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","id":{},"method":"x"}`,
		`{"jsonrpc":"2.0",`,
		`[]`,
	} {
		want, werr := jsonrpc.DecodeMessage([]byte(line))
		got, gerr := decodeMessage([]byte(line))
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: error %v, the SDK's %v", line, gerr, werr)
			continue
		}
		if werr == nil && !reflect.DeepEqual(toSDK(t, got), want) {
			t.Errorf("%s: %#v, the SDK's %#v", line, got, want)
		}
	}
}

// A line over the limit fails alone, with the id found in it; the next
// line reads.
func TestConnLongLine(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":42,"method":"x","params":"` + strings.Repeat("y", 300000) + `"}`
	c := newConn(strings.NewReader(long+"\n"+`{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n"), nil, 1000)
	_, err := c.read()
	bad, ok := err.(*BadMessageError)
	if !ok || !bad.TooLong || string(bad.ID) != "42" || bad.Size != len(long)+1 {
		t.Fatalf("long line: %#v", err)
	}
	m, err := c.read()
	if r, ok := m.(*request); err != nil || !ok || r.Method != "ping" {
		t.Fatalf("next line: %v %v", m, err)
	}
}

// appendMessage writes what jsonrpc.EncodeMessage writes (the same JSON),
// and relays params and results byte for byte.
func TestAppendMessageAsSDK(t *testing.T) {
	for _, m := range []any{
		&request{ID: json.RawMessage(`3`), Method: "tools/call", Params: json.RawMessage(`{"name":"x","arguments":{"a":"<b>&"}}`)},
		&request{ID: json.RawMessage(`"a\"b\\c\u2028é"`), Method: "ping"},
		&request{Method: "notifications/progress", Params: json.RawMessage(`{"progressToken":"t","progress":1}`)},
		&request{Method: "odd\tmethod\"", Params: json.RawMessage(`[]`)},
		&response{ID: json.RawMessage(`9`), Result: json.RawMessage(`{"content":[{"type":"text","text":"<&>"}]}`)},
		&response{ID: json.RawMessage(`"s"`), Result: json.RawMessage(`{}`)},
		&response{ID: json.RawMessage(`1`), Error: &jsonrpc.Error{Code: -32601, Message: "no"}},
		&response{Error: &jsonrpc.Error{Code: -32700, Message: "bad"}},
	} {
		want, err := jsonrpc.EncodeMessage(toSDK(t, m))
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		var x, y any
		if json.Unmarshal(got, &x) != nil || json.Unmarshal(want, &y) != nil || !reflect.DeepEqual(x, y) {
			t.Errorf("%s\nthe SDK writes %s", got, want)
		}
		if _, err := jsonrpc.DecodeMessage(want); err != nil {
			continue // an error answer without an id: the SDK does not read it back either
		}
		back, err := decodeMessage(got)
		if err != nil || !reflect.DeepEqual(back, m) {
			t.Errorf("%s decodes to %#v, %v", got, back, err)
		}
	}
	raw := `{ "content" : [ {"type":"text","text":"<a&b>"} ] }`
	got, _ := appendMessage(nil, &response{ID: json.RawMessage(`2`), Result: json.RawMessage(raw)})
	if want := `{"jsonrpc":"2.0","id":2,"result":` + raw + `}`; string(got) != want {
		t.Errorf("relayed result: %s, want %s", got, want)
	}
}

// An id is answered as the client wrote it: the SDK's ID read 1.5 as 1,
// 0.1 as 0 and 2^63 as -2^63, and the client got its answer under an id
// it never sent (a number or a string, JSON-RPC 2.0 says; any number).
func TestIDsKeptAsWritten(t *testing.T) {
	for _, id := range []string{`1.5`, `0.1`, `9223372036854775808`, `1e2`, `-0`, `1E+400`, `"s"`, `"a\u0062"`, `"\u00e9 x"`, `7`} {
		line := `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`
		for _, l := range []string{line, `{"jsonrpc":"2.0","id": ` + id + ` , "method":"ping","params":{"A":1,"a":2}}`} {
			m, err := decodeMessage([]byte(l))
			r, ok := m.(*request)
			if err != nil || !ok || string(r.ID) != id {
				t.Errorf("%s: read as %#v, %v", l, m, err)
				continue
			}
			out, _ := appendMessage(nil, &response{ID: r.ID, Result: json.RawMessage(`{}`)})
			if want := `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`; string(out) != want {
				t.Errorf("%s: answered %s, want %s", l, out, want)
			}
		}
	}
}

// toSDK is m as the SDK's jsonrpc types hold it.
func toSDK(t *testing.T, m any) jsonrpc.Message {
	t.Helper()
	id := func(raw json.RawMessage) jsonrpc.ID {
		if raw == nil {
			return jsonrpc.ID{}
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		i, err := jsonrpc.MakeID(v)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	switch m := m.(type) {
	case *request:
		return &jsonrpc.Request{ID: id(m.ID), Method: m.Method, Params: m.Params}
	case *response:
		r := &jsonrpc.Response{ID: id(m.ID), Result: m.Result}
		if m.Error != nil {
			r.Error = m.Error
		}
		return r
	}
	t.Fatalf("not a message: %T", m)
	return nil
}
