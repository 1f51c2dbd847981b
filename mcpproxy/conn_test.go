package mcpproxy

import (
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
