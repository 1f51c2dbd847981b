package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/internal/jsonrpc"
)

// request is one request (or notification) on its way.
type request struct {
	id           json.RawMessage
	notification bool
	method       string
	params       json.RawMessage

	ctx    context.Context
	cancel context.CancelFunc
	// cancelled: the client sent $/cancelRequest for it
	cancelled bool
}

// clientCaps are what the client said it implements at initialize.
type clientCaps struct {
	Floor bool `json:"floor"`
	Log   bool `json:"log"`
	Notes bool `json:"notes"`
	Trace bool `json:"trace"`
}

// spec says what one method takes: its params (required ones first) and
// whether it belongs to an instance's queue.
type spec struct {
	required []string
	optional []string
	instance bool // ordered in the queue of params.instance
}

// methods of protocol version 1 (docs/protocol.md), made at first use (a
// process that serves no JSON-RPC never builds the table).
var methods = sync.OnceValue(func() map[string]spec {
	return map[string]spec{
		"initialize":      {optional: []string{"protocol_version", "client", "capabilities", "host_timeout_ms"}},
		"tools/register":  {required: []string{"path"}, optional: []string{"effects"}},
		"start":           {required: []string{"instance"}, optional: []string{"bot", "kind", "session", "parent"}, instance: true},
		"restart":         {required: []string{"instance"}, instance: true},
		"stop":            {required: []string{"instance"}, instance: true},
		"tool":            {required: []string{"instance", "path"}, optional: []string{"args", "call_id"}, instance: true},
		"turn/begin":      {required: []string{"instance"}, optional: []string{"input", "context_fresh"}, instance: true},
		"round/begin":     {required: []string{"instance"}, instance: true},
		"round/end":       {required: []string{"instance"}, optional: []string{"host_continue", "output"}, instance: true},
		"turn/end":        {required: []string{"instance"}, optional: []string{"addenda"}, instance: true},
		"consume":         {required: []string{"instance", "note"}, instance: true},
		"method":          {required: []string{"instance", "owner", "method"}, optional: []string{"input", "call_id", "host_authority"}, instance: true},
		"command":         {required: []string{"instance", "name"}, optional: []string{"text"}, instance: true},
		"spawn":           {required: []string{"instance"}, optional: []string{"child", "bot", "kind"}, instance: true},
		"attune":          {required: []string{"instance"}, instance: true},
		"replay":          {required: []string{"instance"}, instance: true},
		"hydrate":         {required: []string{"instance"}, instance: true},
		"rollback":        {required: []string{"instance", "to_turn"}, instance: true},
		"state":           {required: []string{"instance", "owner"}, instance: true},
		"reset":           {required: []string{"instance", "owner"}, instance: true},
		"$/cancelRequest": {required: []string{"id"}},
	}
})

// params holds every param of every method; spec says which one takes which.
type params struct {
	Instance      string          `json:"instance"`
	Bot           string          `json:"bot"`
	Kind          string          `json:"kind"`
	Session       string          `json:"session"`
	Parent        string          `json:"parent"`
	Child         string          `json:"child"`
	Path          string          `json:"path"`
	Effects       []string        `json:"effects"`
	Args          any             `json:"args"`
	CallID        string          `json:"call_id"`
	Input         any             `json:"input"`
	ContextFresh  bool            `json:"context_fresh"`
	HostContinue  bool            `json:"host_continue"`
	Output        *string         `json:"output"`
	Addenda       []string        `json:"addenda"`
	Note          string          `json:"note"`
	Owner         string          `json:"owner"`
	Method        string          `json:"method"`
	HostAuthority bool            `json:"host_authority"`
	Name          string          `json:"name"`
	Text          string          `json:"text"`
	ToTurn        integer         `json:"to_turn"`
	ID            json.RawMessage `json:"id"`

	ProtocolVersion integer        `json:"protocol_version"`
	Client          map[string]any `json:"client"`
	Capabilities    clientCaps     `json:"capabilities"`
	HostTimeoutMS   integer        `json:"host_timeout_ms"`
}

// integer is an integer param: a JSON number whose value is whole (7, 7.0
// and 7e0 alike, as JSON Schema's "integer" reads it), so that a client
// whose numbers are floats (JavaScript, Python's float) is understood.
type integer int64

func (n *integer) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		*n = integer(v)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
		*n = integer(f)
		return nil
	}
	got := "number " + s
	switch b[0] {
	case '"':
		got = "string"
	case 't', 'f':
		got = "bool"
	case '[':
		got = "array"
	case '{':
		got = "object"
	}
	return &json.UnmarshalTypeError{Value: got, Type: reflect.TypeFor[int64]()}
}

// decodeParams checks params against the method's spec: an unknown,
// missing or mistyped param is -32602 naming it.
func decodeParams(method string, sp spec, raw json.RawMessage) (*params, *rpcError) {
	invalid := func(param, format string, args ...any) *rpcError {
		return &rpcError{Code: codeInvalidParams, Message: "invalid params: " + method + ": " + fmt.Sprintf(format, args...), Data: &errorData{Param: param}}
	}
	fields := map[string]json.RawMessage{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, invalid("", "params must be an object")
		}
	}
	allowed := map[string]bool{}
	for _, k := range sp.required {
		allowed[k] = true
		if v, ok := fields[k]; !ok || string(v) == "null" {
			return nil, invalid(k, "param %q is required", k)
		}
	}
	for _, k := range sp.optional {
		allowed[k] = true
	}
	var unknown []string
	for k := range fields {
		if !allowed[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		names := append(append([]string(nil), sp.required...), sp.optional...)
		return nil, invalid(unknown[0], "unknown param %q (this method takes: %s)", unknown[0], strings.Join(names, ", "))
	}
	var p params
	if len(fields) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&p) == nil {
			if err := checkValues(method, sp, &p, invalid); err != nil {
				return nil, err
			}
			return &p, nil
		}
		p = params{} // find the param at fault, one by one
	}
	for k, v := range fields {
		if string(v) == "null" {
			continue
		}
		one, _ := json.Marshal(map[string]json.RawMessage{k: v})
		dec := json.NewDecoder(bytes.NewReader(one))
		dec.UseNumber()
		if err := dec.Decode(&p); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				name := k
				if te.Field != "" {
					name = te.Field // a member of an object param: capabilities.floor
				}
				return nil, invalid(k, "param %q: want %s, got %s", name, jsonType(te.Type.String()), te.Value)
			}
			return nil, invalid(k, "param %q: %v", k, err)
		}
	}
	if err := checkValues(method, sp, &p, invalid); err != nil {
		return nil, err
	}
	return &p, nil
}

// checkValues refuses the values no method can take: an empty instance or
// tool path, a negative turn, a host timeout no clock can hold.
func checkValues(method string, sp spec, p *params, invalid func(param, format string, args ...any) *rpcError) *rpcError {
	switch {
	case sp.instance && p.Instance == "":
		return invalid("instance", "param \"instance\" must be a non-empty string")
	case method == "tools/register" && p.Path == "":
		return invalid("path", "param \"path\" must be a non-empty string")
	case method == "start" && p.Kind != "" && !slices.Contains(startKinds, p.Kind):
		return invalid("kind", "param \"kind\" must be one of %s, got %q", strings.Join(startKinds, ", "), p.Kind)
	case method == "rollback" && p.ToTurn < 0:
		return invalid("to_turn", "param \"to_turn\" must be 0 (before the first turn) or the number of a turn that ended, got %d", p.ToTurn)
	case method == "initialize" && (p.HostTimeoutMS < 0 || p.HostTimeoutMS > maxHostTimeoutMS):
		return invalid("host_timeout_ms", "param \"host_timeout_ms\" must be between 1 and %d (0 or absent: the configuration's host_timeout), got %d", maxHostTimeoutMS, p.HostTimeoutMS)
	}
	return nil
}

// startKinds are the kinds of instance start takes (engine.StartOptions).
var startKinds = []string{"foreground", "bot", "oneshot", "child"}

// maxHostTimeoutMS is the longest host_timeout_ms a time.Duration holds.
const maxHostTimeoutMS = integer(math.MaxInt64 / int64(time.Millisecond))

func jsonType(goType string) string {
	switch {
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "a boolean"
	case strings.HasPrefix(goType, "int"):
		return "an integer"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map") || strings.Contains(goType, "clientCaps"):
		return "an object"
	case goType == "*string":
		return "a string"
	}
	return goType
}

// queue runs the requests of one instance in the order they arrived.
type queue struct {
	items   []func()
	running bool
}

// enqueue runs f after the requests queued before it under key.
func (s *Server) enqueue(key string, f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queues[key]
	if q == nil {
		q = &queue{}
		s.queues[key] = q
	}
	q.items = append(q.items, f)
	if !q.running {
		q.running = true
		s.work.Add(1)
		s.workers.Go(func() { s.drain(key, q) })
	}
}

func (s *Server) drain(key string, q *queue) {
	defer s.work.Done()
	for {
		s.mu.Lock()
		if len(q.items) == 0 {
			q.running = false
			delete(s.queues, key)
			s.mu.Unlock()
			return
		}
		f := q.items[0]
		q.items[0] = nil
		q.items = q.items[1:]
		s.mu.Unlock()
		f()
	}
}

// request takes one call or notification.
func (s *Server) request(r *request, b *batchRun) {
	sp, known := methods()[r.method]
	if !known {
		if !r.notification {
			s.reply(b, response{JSONRPC: "2.0", ID: r.id, Error: &rpcError{Code: codeMethodNotFound, Message: "method not found: " + r.method}}, false)
		}
		return
	}
	p, perr := decodeParams(r.method, sp, r.params)
	if perr != nil {
		if !r.notification {
			s.reply(b, response{JSONRPC: "2.0", ID: r.id, Error: perr}, false)
		}
		return
	}
	switch r.method {
	case "$/cancelRequest":
		s.cancelRequest(jsonrpc.Compact(p.ID))
		if !r.notification {
			s.reply(b, response{JSONRPC: "2.0", ID: r.id, Result: map[string]any{}}, false)
		}
		return
	case "initialize":
		res, rerr := s.initialize(p)
		if !r.notification {
			s.reply(b, response{JSONRPC: "2.0", ID: r.id, Result: res, Error: rerr}, false)
		}
		return
	}
	e := s.Engine()
	if e == nil {
		if !r.notification {
			s.reply(b, response{JSONRPC: "2.0", ID: r.id, Error: &rpcError{Code: codeNotInitialized, Message: "not initialized: send initialize first"}}, false)
		}
		return
	}
	if !sp.instance { // tools/register: at once, in arrival order
		res, rerr := s.dispatch(context.Background(), e, r.method, p)
		if !r.notification {
			s.reply(b, response{JSONRPC: "2.0", ID: r.id, Result: res, Error: rerr}, false)
		}
		return
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	key := ""
	if !r.notification {
		key = string(r.id)
		s.mu.Lock()
		s.inflight[key] = r
		s.mu.Unlock()
	}
	if b != nil {
		b.add()
	}
	var spawned chan struct{}
	if r.method == "spawn" && p.Child != "" && p.Child != p.Instance {
		// the child's requests pipelined behind its spawn wait for it
		spawned = make(chan struct{})
		s.enqueue(p.Child, func() { <-spawned })
	}
	s.enqueue(p.Instance, func() {
		if spawned != nil {
			defer close(spawned)
		}
		res, rerr := s.dispatch(r.ctx, e, r.method, p)
		s.mu.Lock()
		cancelled := r.cancelled
		if key != "" && s.inflight[key] == r {
			delete(s.inflight, key)
		}
		s.mu.Unlock()
		r.cancel()
		if cancelled && isCancellation(res, rerr) {
			res, rerr = nil, &rpcError{Code: codeCancelled, Message: "request cancelled", Data: &errorData{Code: string(engine.CodeCancelled)}}
		}
		if r.notification {
			if b != nil {
				b.mu.Lock()
				b.open--
				b.flushLocked()
			}
			return
		}
		s.reply(b, response{JSONRPC: "2.0", ID: r.id, Result: res, Error: rerr}, true)
	})
}

// isCancellation reports whether a result says the call was cancelled.
func isCancellation(res any, rerr *rpcError) bool {
	if rerr != nil {
		return rerr.Data != nil && rerr.Data.Code == string(engine.CodeCancelled)
	}
	var err error
	switch x := res.(type) {
	case engine.Outcome:
		err = x.Err
	case engine.MethodOutcome:
		err = x.Err
	case engine.BoundaryResult:
		err = x.Err
	case engine.CommandResult:
		err = x.Err
	}
	return errors.Is(err, engine.ErrCancelled)
}

// cancelRequest cancels a request in flight ($/cancelRequest); an id of
// no request in flight is ignored.
func (s *Server) cancelRequest(id json.RawMessage) {
	s.mu.Lock()
	r := s.inflight[string(id)]
	if r != nil {
		r.cancelled = true
	}
	s.mu.Unlock()
	if r != nil {
		r.cancel()
	}
}

// initialize builds the engine: the handshake of protocol version 1.
func (s *Server) initialize(p *params) (any, *rpcError) {
	if p.ProtocolVersion != 0 && p.ProtocolVersion != ProtocolVersion {
		return nil, &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("invalid params: initialize: protocol_version %d is not spoken here (this server speaks %d)", p.ProtocolVersion, ProtocolVersion),
			Data: &errorData{Param: "protocol_version"}}
	}
	s.mu.Lock()
	if s.eng != nil {
		s.mu.Unlock()
		return nil, &rpcError{Code: codeInvalidRequest, Message: "invalid request: initialize was sent already"}
	}
	s.caps = p.Capabilities
	s.mu.Unlock()
	o := s.o.Engine
	o.Read = s.read
	o.Floor = nil
	if p.Capabilities.Floor {
		o.Floor = s.floor
	}
	if p.HostTimeoutMS > 0 {
		o.HostTimeout = time.Duration(p.HostTimeoutMS) * time.Millisecond
	}
	o.Logger = slog.New(&logHandler{s: s, next: s.log.Handler(), on: p.Capabilities.Log})
	if p.Capabilities.Notes {
		o.Notes = func(instance string, n engine.Note) {
			s.notify("notes", map[string]any{"instance": instance, "note": n})
		}
	}
	if p.Capabilities.Trace {
		o.Print = func(pr engine.Printed) { s.notify("trace", traceParams(pr)) }
	}
	e, err := engine.New(context.Background(), o)
	if err != nil {
		return nil, engErr(err)
	}
	s.mu.Lock()
	s.eng = e
	s.mu.Unlock()
	notifications := []string{}
	if p.Capabilities.Log {
		notifications = append(notifications, "log")
	}
	if p.Capabilities.Notes {
		notifications = append(notifications, "notes")
	}
	if p.Capabilities.Trace {
		notifications = append(notifications, "trace")
	}
	return map[string]any{
		"protocol_version": ProtocolVersion,
		"engine":           map[string]any{"name": "attune", "version": engine.Version},
		"capabilities": map[string]any{
			"batch": true, "cancel": true, "floor": p.Capabilities.Floor, "notifications": notifications,
			"max_message": s.o.MaxMessage, "host_timeout_ms": e.HostTimeout().Milliseconds(),
		},
	}, nil
}

func engErr(err error) *rpcError {
	r := &rpcError{Code: codeEngine, Message: err.Error()}
	if c := engine.CodeOf(err); c != "" {
		r.Data = &errorData{Code: string(c)}
	}
	return r
}

var empty = map[string]any{}

// dispatch runs one method on the engine.
func (s *Server) dispatch(ctx context.Context, e *engine.Engine, method string, p *params) (any, *rpcError) {
	switch method {
	case "tools/register":
		if err := e.RegisterTool(engine.HostTool{Path: p.Path, Effects: p.Effects, Core: s.core}); err != nil {
			return nil, engErr(err)
		}
		return empty, nil
	case "start":
		i, err := e.Start(ctx, engine.StartOptions{ID: p.Instance, Bot: p.Bot, Kind: p.Kind, Session: p.Session, Parent: p.Parent})
		if err != nil {
			return nil, engErr(err)
		}
		return map[string]any{"instance": i.ID(), "session": i.Session(), "bot": i.Bot()}, nil
	case "restart":
		i, err := e.Restart(ctx, p.Instance)
		if err != nil {
			return nil, engErr(err)
		}
		return map[string]any{"instance": i.ID(), "session": i.Session(), "bot": i.Bot()}, nil
	}
	i, ok := e.Instance(p.Instance)
	if !ok {
		return nil, &rpcError{Code: codeEngine, Message: fmt.Sprintf("instance %s is not running (start it first)", p.Instance), Data: &errorData{Code: string(engine.CodeNotRunning)}}
	}
	args, input := plainJSON(p.Args), plainJSON(p.Input)
	switch method {
	case "stop":
		i.Stop()
		return empty, nil
	case "tool":
		return i.Tool(ctx, engine.ToolCall{Path: p.Path, Args: args, CallID: p.CallID}), nil
	case "turn/begin":
		return boundary(i.BeginTurn(ctx, engine.TurnInput{Input: input, ContextFresh: p.ContextFresh}))
	case "round/begin":
		return boundary(i.BeginRound(ctx))
	case "round/end":
		return boundary(i.EndRound(ctx, engine.RoundEnd{HostContinue: p.HostContinue, Output: p.Output}))
	case "turn/end":
		return boundary(i.EndTurn(ctx, p.Addenda...))
	case "consume":
		if err := i.Consume(ctx, p.Note); err != nil {
			return nil, engErr(err)
		}
		return empty, nil
	case "method":
		return i.Method(ctx, engine.MethodCall{Owner: p.Owner, Method: p.Method, Input: input, CallID: p.CallID, HostAuthority: p.HostAuthority}), nil
	case "command":
		// the name as the user typed it (/goal) or bare (goal)
		return i.Command(ctx, strings.TrimPrefix(p.Name, "/"), p.Text), nil
	case "spawn":
		c, err := i.Spawn(ctx, engine.SpawnOptions{ID: p.Child, Bot: p.Bot, Role: p.Kind})
		if err != nil {
			return nil, engErr(err)
		}
		return map[string]any{"instance": c.ID(), "session": c.Session(), "bot": c.Bot()}, nil
	case "attune":
		if err := i.Attune(ctx); err != nil {
			return nil, engErr(err)
		}
		return empty, nil
	case "replay":
		r, err := i.Replay(ctx)
		if err != nil {
			return nil, engErr(err)
		}
		return r, nil
	case "hydrate":
		if err := i.Hydrate(ctx); err != nil {
			return nil, engErr(err)
		}
		return empty, nil
	case "rollback":
		if err := i.Rollback(ctx, int(p.ToTurn)); err != nil {
			return nil, engErr(err)
		}
		return empty, nil
	case "state":
		st, rev, err := i.State(ctx, p.Owner)
		if err != nil {
			return nil, engErr(err)
		}
		return map[string]any{"state": st, "revision": rev}, nil
	case "reset":
		if err := i.ResetOwner(ctx, p.Owner); err != nil {
			return nil, engErr(err)
		}
		return empty, nil
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "method not found: " + method}
}

// plainJSON turns the json.Numbers params were decoded with into float64
// (the engine's plain data).
func plainJSON(v any) any {
	if v == nil {
		return nil
	}
	return engine.Plain(v)
}

func boundary(r engine.BoundaryResult, err error) (any, *rpcError) {
	if err != nil {
		return nil, engErr(err)
	}
	return r, nil
}

// logHandler sends the engine's log to the client as log notifications
// (when it asked for them), else to the server's logger.
type logHandler struct {
	s     *Server
	next  slog.Handler
	on    bool
	attrs []slog.Attr
}

func (h *logHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.on || h.next.Enabled(ctx, l)
}

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if !h.on {
		return h.next.Handle(ctx, r)
	}
	args := make([]any, 0, 2*(len(h.attrs)+r.NumAttrs()))
	for _, a := range h.attrs {
		args = append(args, a.Key, a.Value.Any())
	}
	r.Attrs(func(a slog.Attr) bool { args = append(args, a.Key, a.Value.Any()); return true })
	h.s.notify("log", logParams(r.Level, r.Message, args...))
	return nil
}

func (h *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	c.next = h.next.WithAttrs(as)
	return &c
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.next = h.next.WithGroup(name)
	return &c
}

// logParams: {level, message, fields?}; Lua print is message "print" with
// fields program, instance and text.
func logParams(l slog.Level, msg string, args ...any) map[string]any {
	m := map[string]any{"level": strings.ToLower(l.String()), "message": msg}
	if len(args) > 1 {
		f := map[string]any{}
		for k := 0; k+1 < len(args); k += 2 {
			key, _ := args[k].(string)
			v := args[k+1]
			if err, ok := v.(error); ok {
				v = err.Error()
			}
			f[key] = v
		}
		m["fields"] = f
	}
	return m
}

// traceParams are the params of a trace notification (docs/protocol.md):
// a line a behavior printed or logged.
func traceParams(p engine.Printed) map[string]any {
	m := map[string]any{"instance": p.Instance, "session": p.Session, "program": p.Program, "level": p.Level, "text": p.Text}
	if p.CallID != "" {
		m["call_id"] = p.CallID
	}
	if p.Turn > 0 {
		m["turn"] = p.Turn
	}
	if p.Round > 0 {
		m["round"] = p.Round
	}
	if p.Cut {
		m["cut"] = true
	}
	return m
}
