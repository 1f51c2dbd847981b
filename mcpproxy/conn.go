package mcpproxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	wire "github.com/attune-dev/attune/internal/jsonrpc"
)

// conn is one side of the relay: newline-delimited JSON-RPC messages, as
// the MCP stdio transport frames them, read and written with the wire
// package serve shares. Unlike the SDK's own stdio connection, a line that
// is not a JSON-RPC message, or is longer than the limit, fails alone: the
// next line is read as usual.
type conn struct {
	r   *wire.Reader
	w   *wire.Writer
	max int
}

func newConn(r io.Reader, w io.Writer, max int) *conn {
	return &conn{r: wire.NewReader(r, max, wire.Lines), w: wire.NewWriter(w, nil), max: max}
}

// request is a request, or a notification when ID is nil.
type request struct {
	ID     json.RawMessage // the id as the peer wrote it (wire.Key names it in maps)
	Method string
	Params json.RawMessage
	n      int64 // the proxy's own id, for a request it writes (ID nil)
}

func (r *request) isCall() bool { return r.ID != nil || r.n > 0 }

// response is an answer: Error set, or Result.
type response struct {
	ID     json.RawMessage
	Result json.RawMessage
	Error  *jsonrpc.Error
}

// BadMessageError is a line that is not a JSON-RPC message, or is longer
// than [harness.mcp] max_message. ID is the request id found in it (its
// token as written), when one could be.
type BadMessageError struct {
	ID      json.RawMessage
	Size    int  // bytes read of the line
	Limit   int  // the limit, max_message
	TooLong bool // longer than the limit
	Err     error
}

func (e *BadMessageError) Error() string {
	if e.TooLong {
		return fmt.Sprintf("a message of %d bytes, over the limit of %d (max_message in [harness.mcp])", e.Size, e.Limit)
	}
	return fmt.Sprintf("a line that is not a JSON-RPC 2.0 message: %v", e.Err)
}

func (e *BadMessageError) Unwrap() error { return e.Err }

// ErrTooLong is what a BadMessageError for a line over the limit wraps.
var ErrTooLong = errors.New("message too long")

// read returns the next message (a *request or a *response); a
// *BadMessageError for a bad line; io.EOF at the end of the stream.
func (c *conn) read() (any, error) {
	line, err := c.r.Next()
	var long *wire.TooLongError
	if errors.As(err, &long) {
		id, _ := wire.FindID(long.Head, long.Tail)
		return nil, &BadMessageError{ID: id, Size: long.Size, Limit: c.max, TooLong: true, Err: ErrTooLong}
	}
	if err != nil {
		return nil, err
	}
	msg, derr := decodeMessage(line)
	if derr != nil {
		id, _ := wire.FindID(line, nil)
		return nil, &BadMessageError{ID: id, Size: len(line), Err: derr}
	}
	return msg, nil
}

// wireMessage is a JSON-RPC 2.0 message as it is written.
type wireMessage struct {
	Version string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *jsonrpc.Error  `json:"error"`
}

// decodeMessage reads one message by the rules of the SDK's
// jsonrpc.DecodeMessage, but keeps the id as the peer wrote it: the
// SDK's ID reads 1.5 as 1 and 2^63 as -2^63, and the client got its
// answer under an id it never sent. The usual message takes a fast path
// (fastWire); encoding/json reads the rest.
func decodeMessage(data []byte) (any, error) {
	var w wireMessage
	if !fastWire(data, &w) {
		w = wireMessage{}
		if err := json.Unmarshal(data, &w); err != nil {
			var te *json.UnmarshalTypeError
			switch {
			case len(data) > 0 && data[0] == '[':
				return nil, errors.New("a JSON array (a batch): MCP has no batches, send each message on a line of its own")
			case errors.As(err, &te) && te.Field == "":
				return nil, fmt.Errorf("a message is a JSON object, not a %s", te.Value)
			case errors.As(err, &te):
				return nil, fmt.Errorf("%q is a JSON %s, not what JSON-RPC 2.0 wants there", te.Field, te.Value)
			}
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		w.ID = wire.Compact(w.ID)
		if len(w.ID) > 0 && !wire.ValidID(w.ID) { // fastWire checked its own
			return nil, fmt.Errorf("the id is a JSON %s: it must be a string, a number or absent", jsonKindOf(w.ID))
		}
	}
	if w.Version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", w.Version, "2.0")
	}
	if string(w.ID) == "null" {
		w.ID = nil // as the SDK reads it: no id
	}
	if w.Method != nil {
		return &request{ID: w.ID, Method: *w.Method, Params: w.Params}, nil
	}
	if w.ID == nil {
		return nil, errors.New("a response without an id, or a request without a method")
	}
	return &response{ID: w.ID, Result: w.Result, Error: w.Error}, nil
}

// jsonKindOf names the JSON type of a value's text.
func jsonKindOf(raw []byte) string {
	if len(raw) == 0 {
		return "value"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case '"':
		return "string"
	case 'n':
		return "null"
	}
	return "number"
}

// write sends one message (a *request or a *response) on one line. A
// request, a notification and a result are framed here around their
// params or result as they are (each is valid JSON: decoded from a peer's
// message, or encoded by the proxy), so a relayed result reaches the
// client byte for byte and is not encoded again.
func (c *conn) write(msg any) error {
	bp := framePool.Get().(*[]byte)
	data, err := appendMessage((*bp)[:0], msg)
	if err != nil {
		framePool.Put(bp)
		return err
	}
	err = c.w.Write(data)
	if cap(data) <= 64<<10 { // keep small buffers only
		*bp = data[:0]
		framePool.Put(bp)
	}
	return err
}

var framePool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// appendMessage appends msg as JSON-RPC 2.0, as jsonrpc.EncodeMessage
// writes it, with the id as it was read.
func appendMessage(b []byte, msg any) ([]byte, error) {
	switch m := msg.(type) {
	case *request:
		b = append(b, `{"jsonrpc":"2.0",`...)
		switch {
		case m.ID != nil:
			b = append(b, `"id":`...)
			b = append(b, m.ID...)
			b = append(b, ',')
		case m.n > 0:
			b = append(b, `"id":`...)
			b = strconv.AppendInt(b, m.n, 10)
			b = append(b, ',')
		}
		b = append(b, `"method":`...)
		b = appendString(b, m.Method)
		if len(m.Params) > 0 {
			b = append(b, `,"params":`...)
			b = append(b, m.Params...)
		}
		return append(b, '}'), nil
	case *response:
		b = append(b, `{"jsonrpc":"2.0"`...)
		if m.ID != nil {
			b = append(b, `,"id":`...)
			b = append(b, m.ID...)
		}
		switch {
		case m.Error != nil:
			e, err := json.Marshal(m.Error)
			if err != nil {
				return b, fmt.Errorf("marshaling jsonrpc message: %w", err)
			}
			b = append(b, `,"error":`...)
			b = append(b, e...)
		case len(m.Result) > 0:
			b = append(b, `,"result":`...)
			b = append(b, m.Result...)
		}
		return append(b, '}'), nil
	}
	return b, fmt.Errorf("not a message: %T", msg)
}

// intID is the JSON-RPC id n, for the proxy's own requests.
func intID(n int64) json.RawMessage { return wire.IntID(n) }

// callID reads an upstream's or the client's answer to one of the proxy's
// own requests as its number; false for an id the proxy never writes.
func callID(id json.RawMessage) (int64, bool) { return wire.ParseCallID(id, "") }

// appendString appends s as a JSON string: as it is when it needs no
// escaping (method names, most ids), else as encoding/json writes it.
func appendString(b []byte, s string) []byte {
	for k := 0; k < len(s); k++ {
		if c := s[k]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
