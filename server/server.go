// Package server is `attune serve`: the engine as a JSON-RPC 2.0 service
// over a pair of streams (stdin and stdout), so that a host written in
// another language can embed attune. docs/protocol.md documents protocol
// version 1 (every method, callback, param and result), and
// docs/protocol.schema.json describes every message.
//
// In short: one JSON value per line (a request, a notification, a
// response, or a batch of them), or messages framed by Content-Length
// headers when the client's first message is. The client sends initialize first; the
// server then builds the engine. Requests for one instance are handled in
// the order they arrive; requests for different instances run
// concurrently. The engine calls back into the client (host/read,
// host/floor when the client implements it, host/core), each a request
// the client answers on the same stream, each bounded by the engine's
// host_timeout. Duplicate and late answers are logged and ignored. On the
// end of input (or Server.Shutdown) pending callbacks are cancelled,
// requests in flight are answered, and Serve returns.
package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/internal/jsonrpc"
	"github.com/attune-dev/attune/internal/workers"
)

// ProtocolVersion is the version of the protocol this server speaks.
const ProtocolVersion = 1

// DefaultMaxMessage bounds one message (one line) unless Options say.
const DefaultMaxMessage = 16 << 20

// Codes of JSON-RPC errors.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeEngine         = -32000 // an engine error: error.data.code is the engine's code
	codeNotInitialized = -32002 // a request before initialize
	codeCancelled      = -32800 // a request the client cancelled ($/cancelRequest)
)

// Options configure a Server.
type Options struct {
	// Engine is what the engine is built from at initialize. The server
	// sets Read, Floor (when the client implements host/floor), Logger,
	// Notes, and HostTimeout (when the client asks for one).
	Engine engine.Options
	// MaxMessage bounds one message in bytes (DefaultMaxMessage when 0).
	// A longer line is answered with an error and skipped.
	MaxMessage int
	// Log receives the engine's log (Lua print, warnings) when the client
	// did not ask for log notifications, and the server's own warnings
	// (duplicate answers, say). Nil: discarded.
	Log *slog.Logger
}

// Server serves one engine over one stream pair.
type Server struct {
	o   Options
	out *jsonrpc.Writer // framed as the client frames its messages
	log *slog.Logger

	mu       sync.Mutex
	eng      *engine.Engine
	caps     clientCaps
	queues   map[string]*queue
	inflight map[string]*request         // requests by id, for $/cancelRequest
	calls    jsonrpc.Calls[chan message] // callbacks awaiting the client's answers, as "e1", "e2", ...
	closed   bool                        // the input ended: no new callbacks
	done     chan struct{}               // closed with closed
	work     sync.WaitGroup
	workers  *workers.Pool // the instances' queues drain on it (internal/workers)
}

// New returns a server writing to out.
func New(out io.Writer, o Options) *Server {
	if o.MaxMessage <= 0 {
		o.MaxMessage = DefaultMaxMessage
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{o: o, out: jsonrpc.NewWriter(out, nil), log: log, queues: map[string]*queue{}, inflight: map[string]*request{},
		done: make(chan struct{}), workers: workers.New(0)}
}

// Engine returns the engine built at initialize (nil before).
func (s *Server) Engine() *engine.Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.eng
}

// Close closes the engine.
func (s *Server) Close() error {
	if e := s.Engine(); e != nil {
		return e.Close()
	}
	return nil
}

// message is any JSON-RPC 2.0 message, as read.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
	bad     string          // an answer to a callback that is not a response: why
}

// response is what the server answers.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int        `json:"code"`
	Message string     `json:"message"`
	Data    *errorData `json:"data,omitempty"`
}

// errorData names the engine's error code (engine.Code) and, for invalid
// params, the param.
type errorData struct {
	Code  string `json:"code,omitempty"`
	Param string `json:"param,omitempty"`
}

var nullID = jsonrpc.Null

func (s *Server) send(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(response{JSONRPC: "2.0", ID: nullID, Error: &rpcError{Code: codeEngine, Message: "the answer cannot be encoded: " + err.Error()}})
	}
	_ = s.out.Write(data)
}

// notify sends a notification to the client.
func (s *Server) notify(method string, params any) {
	s.send(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
}

// Serve reads messages from in until it ends or ctx is done; then it
// cancels the callbacks waiting for the client, answers the requests in
// flight and returns (nil at the end of input).
func (s *Server) Serve(ctx context.Context, in io.Reader) error {
	type item struct {
		line []byte
		err  error
	}
	items := make(chan item)
	stop := make(chan struct{})
	r := jsonrpc.NewReader(in, s.o.MaxMessage, jsonrpc.Detect)
	s.out.FrameAs(r) // the client's first message says: lines or Content-Length headers
	go func() {
		for {
			line, err := r.Next()
			select {
			case items <- item{line, err}:
			case <-stop:
				return
			}
			var long *jsonrpc.TooLongError
			var bad *jsonrpc.FrameError
			if err != nil && !errors.As(err, &long) && !errors.As(err, &bad) {
				return
			}
		}
	}()
	var rerr error
loop:
	for {
		select {
		case it := <-items:
			var long *jsonrpc.TooLongError
			switch {
			case it.err == nil:
				s.handle(it.line)
			case errors.As(it.err, &long):
				s.oversize(long)
			case errors.As(it.err, new(*jsonrpc.FrameError)):
				s.send(response{JSONRPC: "2.0", ID: nullID, Error: &rpcError{Code: codeParse, Message: "parse error: " + it.err.Error()}})
			default:
				if it.err != io.EOF {
					rerr = it.err
				}
				break loop
			}
		case <-ctx.Done():
			break loop
		}
	}
	close(stop)
	s.shutdown()
	return rerr
}

// oversize answers a line over the message limit. The id, when its start
// names one before the large value, is kept: a
// request gets its error under its id, and an answer to a callback fails
// that callback at once (not at its deadline).
func (s *Server) oversize(long *jsonrpc.TooLongError) {
	msg := fmt.Sprintf("a message longer than %d bytes (the server's limit, attune serve --max-message) was skipped", s.o.MaxMessage)
	id, kind := jsonrpc.LeadingID(long.Head)
	if id != nil && kind != jsonrpc.KindRequest && s.isPending(id) {
		s.answered(message{ID: id, bad: "the client's answer: " + msg})
		id = nil
	}
	if id == nil {
		id = nullID
	}
	s.send(response{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: codeInvalidRequest, Message: "invalid request: " + msg, Data: &errorData{Code: "oversize"}}})
}

// shutdown cancels pending callbacks and waits for the requests in flight.
func (s *Server) shutdown() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	s.mu.Unlock()
	s.calls.Close() // no new callbacks; those waiting end on done
	s.work.Wait()
	s.workers.Close()
}

// handle takes one line: a message or a batch.
func (s *Server) handle(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	if line[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(line, &batch); err != nil {
			s.send(response{JSONRPC: "2.0", ID: nullID, Error: &rpcError{Code: codeParse, Message: "parse error: " + err.Error()}})
			return
		}
		if len(batch) == 0 {
			s.send(response{JSONRPC: "2.0", ID: nullID, Error: &rpcError{Code: codeInvalidRequest, Message: "invalid request: an empty batch"}})
			return
		}
		b := &batchRun{s: s}
		for _, raw := range batch {
			s.message(raw, b)
		}
		b.seal()
		return
	}
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		s.send(response{JSONRPC: "2.0", ID: nullID, Error: &rpcError{Code: codeParse, Message: "parse error: " + err.Error()}})
		return
	}
	s.message(line, nil)
}

// batchRun collects the answers of one batch and sends them together once
// every request of the batch is answered.
type batchRun struct {
	s       *Server
	mu      sync.Mutex
	answers []response
	open    int
	sealed  bool
}

func (b *batchRun) add() { b.mu.Lock(); b.open++; b.mu.Unlock() }
func (b *batchRun) answer(r response) {
	b.mu.Lock()
	b.answers = append(b.answers, r)
	b.open--
	b.flushLocked()
}
func (b *batchRun) immediate(r response) {
	b.mu.Lock()
	b.answers = append(b.answers, r)
	b.mu.Unlock()
}
func (b *batchRun) seal() { b.mu.Lock(); b.sealed = true; b.flushLocked() }

func (b *batchRun) flushLocked() {
	if !b.sealed || b.open > 0 {
		b.mu.Unlock()
		return
	}
	out := b.answers
	b.answers = nil
	b.sealed = false // sent once
	b.mu.Unlock()
	if len(out) > 0 { // a batch of notifications gets no answer
		b.s.send(out)
	}
}

// reply answers a request, alone or as part of its batch.
func (s *Server) reply(b *batchRun, r response, queued bool) {
	switch {
	case b == nil:
		s.send(r)
	case queued:
		b.answer(r)
	default:
		b.immediate(r)
	}
}

// message takes one JSON value of a line or a batch.
func (s *Server) message(raw json.RawMessage, b *batchRun) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		s.reply(b, response{JSONRPC: "2.0", ID: nullID, Error: &rpcError{Code: codeInvalidRequest, Message: "invalid request: a message is a JSON object"}}, false)
		return
	}
	idRaw, hasID := fields["id"]
	if hasID && !jsonrpc.ValidID(idRaw) {
		s.reply(b, response{JSONRPC: "2.0", ID: nullID, Error: &rpcError{Code: codeInvalidRequest, Message: "invalid request: id must be a string, a number or null"}}, false)
		return
	}
	id := nullID
	if hasID {
		id = jsonrpc.Compact(idRaw)
	}
	invalid := func(msg string) {
		s.reply(b, response{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: codeInvalidRequest, Message: "invalid request: " + msg}}, false)
	}
	if v, ok := fields["jsonrpc"]; !ok || string(jsonrpc.Compact(v)) != `"2.0"` {
		invalid(`"jsonrpc" must be "2.0"`)
		return
	}
	mraw, isCall := fields["method"]
	if !isCall {
		_, hasResult := fields["result"]
		errRaw, hasError := fields["error"]
		if !hasID || hasResult == hasError {
			if hasID && s.isPending(id) { // fail the callback now, not at its deadline
				what := `neither "result" nor "error"`
				if hasResult {
					what = `both "result" and "error"`
				}
				s.answered(message{ID: id, bad: "the client's answer has " + what + " (a JSON-RPC 2.0 response has one of them; a null result is \"result\": null)"})
				return
			}
			invalid(`a request has a "method"; a response has an "id" and one of "result" or "error"`)
			return
		}
		m := message{ID: id, Result: fields["result"]}
		if hasError {
			m.Error = &rpcError{}
			if err := json.Unmarshal(errRaw, m.Error); err != nil {
				m.Error = &rpcError{Code: codeInvalidRequest, Message: "the client's error object does not read: " + err.Error()}
			}
		}
		s.answered(m)
		return
	}
	var method string
	if err := json.Unmarshal(mraw, &method); err != nil || method == "" {
		invalid(`"method" must be a non-empty string`)
		return
	}
	for k := range fields {
		switch k {
		case "jsonrpc", "id", "method", "params":
		default:
			invalid(fmt.Sprintf("unknown member %q", k))
			return
		}
	}
	params := fields["params"]
	if len(params) > 0 && params[0] != '{' && string(params) != "null" {
		if !hasID {
			return
		}
		s.reply(b, response{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: codeInvalidParams, Message: "invalid params: params must be an object (by-name)"}}, false)
		return
	}
	s.request(&request{id: id, notification: !hasID, method: method, params: params}, b)
}

// answered delivers the client's answer to a callback. An answer nobody
// waits for (a duplicate, one past its deadline, an unknown id) is logged
// and dropped: the reader never blocks on it.
func (s *Server) answered(m message) {
	var ch chan message
	if n, ok := jsonrpc.ParseCallID(m.ID, "e"); ok {
		ch, _ = s.calls.Take(n)
	}
	if ch == nil {
		s.warn("ignored an answer to no pending callback (a duplicate, a late one, or an unknown id)", "id", string(m.ID))
		return
	}
	ch <- m // buffered, and sent once: the entry is gone
}

// isPending reports whether a callback waits for an answer with this id.
func (s *Server) isPending(id json.RawMessage) bool {
	n, ok := jsonrpc.ParseCallID(id, "e")
	return ok && s.calls.Waits(n)
}

func (s *Server) warn(msg string, args ...any) {
	s.log.Warn(msg, args...)
	s.mu.Lock()
	on := s.caps.Log
	s.mu.Unlock()
	if on {
		s.notify("log", logParams(slog.LevelWarn, msg, args...))
	}
}

// errClosed fails a callback once the client's input has ended.
var errClosed = &engine.Error{Code: engine.CodeCancelled, Message: "cancelled: the client's input ended"}

// call sends a request to the client and waits for its answer, for ctx
// (which carries the engine's host_timeout) or the end of the input.
func (s *Server) call(ctx context.Context, method string, params any, result any) error {
	ch := make(chan message, 1)
	n, ok := s.calls.Add(ch)
	if !ok {
		return errClosed
	}
	defer s.calls.Take(n)
	id := strconv.Quote("e" + strconv.FormatInt(n, 10))
	s.send(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  any             `json:"params"`
	}{"2.0", json.RawMessage(id), method, params})
	select {
	case m := <-ch:
		if m.bad != "" {
			return fmt.Errorf("%s: %s", method, m.bad)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: the client answered error %d: %s", method, m.Error.Code, m.Error.Message)
		}
		if result != nil && len(m.Result) > 0 {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("%s: the client's answer does not read: %v", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
		return errClosed
	}
}

// Read is the engine's ReadFunc: it asks the client (host/read).
func (s *Server) read(ctx context.Context, key string) (any, error) {
	p := map[string]any{"key": key}
	if c, ok := engine.ReadCallOf(ctx); ok {
		p["instance"], p["session"] = c.Instance, c.Session
		if c.CallID != "" {
			p["call_id"] = c.CallID
		}
	}
	var v any
	err := s.call(ctx, "host/read", p, &v)
	return v, err
}

// floor is the engine's FloorFunc when the client implements host/floor;
// the client answers {refused: bool, reason?: string}.
func (s *Server) floor(ctx context.Context, c engine.FloorCall) (string, bool) {
	var v struct {
		Refused bool   `json:"refused"`
		Reason  string `json:"reason"`
	}
	if err := s.call(ctx, "host/floor", callParams(c.Instance, c.Session, c.CallID, c.Path, c.Args, c.Marks), &v); err != nil {
		return "the floor could not be asked: " + err.Error(), true
	}
	return v.Reason, v.Refused
}

// core is the core of every tool the client registers (host/core).
func (s *Server) core(ctx context.Context, c engine.CoreCall) (any, error) {
	if _, ok := ctx.Deadline(); !ok {
		// the engine's fast path hands the core the request's own ctx:
		// the client gets the same deadline as on every other path
		if e := s.Engine(); e != nil {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, e.HostTimeout())
			defer cancel()
			res, err := s.callCore(ctx, c)
			if err != nil && ctx.Err() == context.DeadlineExceeded {
				return nil, &engine.Error{Code: engine.CodeHostTimeout, Err: err,
					Message: fmt.Sprintf("host-timeout: host tool %s did not answer within %v", c.Path, e.HostTimeout())}
			}
			return res, err
		}
	}
	return s.callCore(ctx, c)
}

func (s *Server) callCore(ctx context.Context, c engine.CoreCall) (any, error) {
	var v any
	err := s.call(ctx, "host/core", callParams(c.Instance, c.Session, c.CallID, c.Path, c.Args, c.Marks), &v)
	return v, err
}

func callParams(instance, session, callID, path string, args any, marks []string) map[string]any {
	if marks == nil {
		marks = []string{}
	}
	p := map[string]any{"instance": instance, "session": session, "path": path, "args": args, "marks": marks}
	if callID != "" {
		p["call_id"] = callID
	}
	return p
}
