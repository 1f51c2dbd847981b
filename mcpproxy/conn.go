package mcpproxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// conn is one side of the relay: newline-delimited JSON-RPC messages, as
// the MCP stdio transport frames them, decoded and encoded with the SDK's
// jsonrpc codec. Unlike the SDK's own stdio connection, a line that is not
// a JSON-RPC message, or is longer than the limit, fails alone: the next
// line is read as usual.
type conn struct {
	r   *bufio.Reader
	max int

	wmu sync.Mutex
	w   io.Writer
}

func newConn(r io.Reader, w io.Writer, max int) *conn {
	return &conn{r: bufio.NewReaderSize(r, 64<<10), w: w, max: max}
}

// BadMessageError is a line that is not a JSON-RPC message, or is longer
// than [harness.mcp] max_message. ID is the request id found in it, when
// one could be.
type BadMessageError struct {
	ID      jsonrpc.ID
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

// read returns the next message; a *BadMessageError for a bad line; io.EOF
// at the end of the stream.
func (c *conn) read() (jsonrpc.Message, error) {
	for {
		line, err := c.line()
		if err != nil {
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		msg, derr := decodeMessage(line)
		if derr != nil {
			return nil, &BadMessageError{ID: findID(line, nil), Size: len(line), Err: derr}
		}
		return msg, nil
	}
}

// line reads one line of at most c.max bytes. A longer one is read to its
// end and dropped; its head and tail are kept to find its id.
func (c *conn) line() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := c.r.ReadSlice('\n')
		if len(buf)+len(chunk) > c.max {
			head := append([]byte(nil), buf[:min(len(buf), 4096)]...)
			if len(head) < 4096 {
				head = append(head, chunk[:min(len(chunk), 4096-len(head))]...)
			}
			n := len(buf) + len(chunk)
			tail := append([]byte(nil), chunk[max(0, len(chunk)-4096):]...)
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = c.r.ReadSlice('\n')
				n += len(chunk)
				tail = append(tail, chunk...)
				tail = tail[max(0, len(tail)-4096):]
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, &BadMessageError{ID: findID(head, tail), Size: n, Limit: c.max, TooLong: true, Err: ErrTooLong}
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(bytes.TrimSpace(buf)) > 0:
			return buf, nil
		default:
			return nil, err
		}
	}
}

// wireMessage is a JSON-RPC 2.0 message as it is written.
type wireMessage struct {
	Version string          `json:"jsonrpc"`
	ID      any             `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *jsonrpc.Error  `json:"error"`
}

// decodeMessage reads one message into the SDK's jsonrpc types, by the
// rules of jsonrpc.DecodeMessage, with encoding/json: the SDK's decoder
// allocates tens of kilobytes for every message, which made garbage
// collection the largest cost of a relayed call.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
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
	}
	if w.Version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", w.Version, "2.0")
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, fmt.Errorf("the id is a JSON %s: it must be a string, a number or absent", jsonKind(w.ID))
	}
	if w.Method != nil {
		return &jsonrpc.Request{ID: id, Method: *w.Method, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, errors.New("a response without an id, or a request without a method")
	}
	r := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		r.Error = w.Error
	}
	return r, nil
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		return "number"
	}
	return "value"
}

// idPattern finds "id": N or "id": "S" in a message that does not decode.
var idPattern = regexp.MustCompile(`"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*")`)

// findID returns the id written in the head or the tail of a bad line, or
// the zero ID. A JSON-RPC message usually writes its id first or last.
func findID(head, tail []byte) jsonrpc.ID {
	for k, b := range [][]byte{head, tail} {
		m := idPattern.FindAllSubmatch(b, -1)
		if len(m) == 0 {
			continue
		}
		at := 0 // the head's first id, the tail's last
		if k == 1 {
			at = len(m) - 1
		}
		var v any
		if json.Unmarshal(m[at][1], &v) == nil {
			if id, err := jsonrpc.MakeID(v); err == nil {
				return id
			}
		}
	}
	return jsonrpc.ID{}
}

// write sends one message on one line. A request, a notification and a
// result are framed here around their params or result as they are (each
// is valid JSON: decoded from a peer's message, or encoded by the proxy),
// so a relayed result reaches the client byte for byte and is not encoded
// again; an error answer goes through the SDK's jsonrpc.EncodeMessage.
func (c *conn) write(msg jsonrpc.Message) error {
	bp := framePool.Get().(*[]byte)
	data, err := appendMessage((*bp)[:0], msg)
	if err != nil {
		framePool.Put(bp)
		return err
	}
	data = append(data, '\n')
	c.wmu.Lock()
	_, err = c.w.Write(data)
	c.wmu.Unlock()
	if cap(data) <= 64<<10 { // keep small buffers only
		*bp = data[:0]
		framePool.Put(bp)
	}
	return err
}

var framePool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// appendMessage appends msg as JSON-RPC 2.0, as jsonrpc.EncodeMessage
// writes it.
func appendMessage(b []byte, msg jsonrpc.Message) ([]byte, error) {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		b = append(b, `{"jsonrpc":"2.0",`...)
		if m.ID.IsValid() {
			b = append(b, `"id":`...)
			b = appendID(b, m.ID)
			b = append(b, ',')
		}
		b = append(b, `"method":`...)
		b = appendString(b, m.Method)
		if len(m.Params) > 0 {
			b = append(b, `,"params":`...)
			b = append(b, m.Params...)
		}
		return append(b, '}'), nil
	case *jsonrpc.Response:
		if m.Error == nil && len(m.Result) > 0 && m.ID.IsValid() {
			b = append(b, `{"jsonrpc":"2.0","id":`...)
			b = appendID(b, m.ID)
			b = append(b, `,"result":`...)
			b = append(b, m.Result...)
			return append(b, '}'), nil
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	return append(b, data...), err
}

func appendID(b []byte, id jsonrpc.ID) []byte {
	switch v := id.Raw().(type) {
	case int64:
		return strconv.AppendInt(b, v, 10)
	case string:
		return appendString(b, v)
	}
	return append(b, "null"...)
}

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
