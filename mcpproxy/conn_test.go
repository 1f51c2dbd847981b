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
		if werr == nil && !reflect.DeepEqual(got, want) {
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
	if !ok || !bad.TooLong || bad.ID.Raw() != int64(42) || bad.Size != len(long)+1 {
		t.Fatalf("long line: %#v", err)
	}
	m, err := c.read()
	if r, ok := m.(*jsonrpc.Request); err != nil || !ok || r.Method != "ping" {
		t.Fatalf("next line: %v %v", m, err)
	}
}

// appendMessage writes what jsonrpc.EncodeMessage writes (the same JSON),
// and relays params and results byte for byte.
func TestAppendMessageAsSDK(t *testing.T) {
	id := func(v any) jsonrpc.ID {
		i, err := jsonrpc.MakeID(v)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	for _, m := range []jsonrpc.Message{
		&jsonrpc.Request{ID: id(float64(3)), Method: "tools/call", Params: json.RawMessage(`{"name":"x","arguments":{"a":"<b>&"}}`)},
		&jsonrpc.Request{ID: id("a\"b\\c\u2028é"), Method: "ping"},
		&jsonrpc.Request{Method: "notifications/progress", Params: json.RawMessage(`{"progressToken":"t","progress":1}`)},
		&jsonrpc.Request{Method: "odd\tmethod\"", Params: json.RawMessage(`[]`)},
		&jsonrpc.Response{ID: id(float64(9)), Result: json.RawMessage(`{"content":[{"type":"text","text":"<&>"}]}`)},
		&jsonrpc.Response{ID: id("s"), Result: json.RawMessage(`{}`)},
		&jsonrpc.Response{ID: id(float64(1)), Error: &jsonrpc.Error{Code: -32601, Message: "no"}},
		&jsonrpc.Response{Error: &jsonrpc.Error{Code: -32700, Message: "bad"}},
	} {
		want, err := jsonrpc.EncodeMessage(m)
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
	got, _ := appendMessage(nil, &jsonrpc.Response{ID: id(float64(2)), Result: json.RawMessage(raw)})
	if want := `{"jsonrpc":"2.0","id":2,"result":` + raw + `}`; string(got) != want {
		t.Errorf("relayed result: %s, want %s", got, want)
	}
}
