// Package server exposes the engine as a JSON-RPC 2.0 service over a pair
// of streams (stdin/stdout for `attune serve`), so a host written in another
// language can embed attune.
//
// Messages are single JSON objects, one per line. The client calls the
// engine's methods (below); the engine calls back into the client for what
// only the host can do: "host/read" (admit/read KEY), "host/floor" (the
// floor's verdict on a call) and "host/core" (a host tool's core), each a
// JSON-RPC request with an id that the client answers on the same stream.
//
// Methods (params are objects; results are objects):
//
//	start       {instance, bot, kind?, session?, parent?}           -> {instance, session, bot}
//	restart     {instance}                                           -> {instance, session}
//	stop        {instance}                                           -> {}
//	tools/register {path, effects?}                                  -> {}   (its core is host/core)
//	tool        {instance, path, args?, call_id?}                    -> outcome
//	turn/begin  {instance, input?, context_fresh?}                   -> boundary
//	round/begin {instance}                                           -> boundary (notes placed)
//	round/end   {instance, host_continue?, output?}                  -> boundary (+ continue)
//	turn/end    {instance, addenda?}                                 -> boundary (+ loop_end)
//	consume     {instance, note}                                     -> {}
//	method      {instance, owner, method, input?, call_id?, host_authority?} -> method outcome
//	command     {instance, name, text?}                              -> {status, error?, notes}
//	spawn       {instance, child?, bot?, kind?}                      -> {instance, session}
//	attune      {instance}                                           -> {}
//	replay      {instance}                                           -> {notes, steps, diverged}
//	hydrate     {instance}                                           -> {}
//	rollback    {instance, to_turn}                                  -> {}
//	state       {instance, owner}                                    -> {state, revision}
//	reset       {instance, owner}                                    -> {}
//
// A replay's diverged lists every way a replayed step differed from the
// journal, each {entry, step, turn?, round?, call_id?, field, recorded,
// replayed}; it is empty when the replay reproduced the session.
//
// A Server is safe for concurrent requests: each request runs on its own
// goroutine; calls to one instance's boundaries are serialized by the engine.
package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"attune/engine"
)

// Codes of JSON-RPC errors.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeEngine         = -32000
)

type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int        `json:"code"`
	Message string     `json:"message"`
	Data    *errorData `json:"data,omitempty"`
}

// errorData names the engine's error code (engine.Code).
type errorData struct {
	Code string `json:"code"`
}

// Server serves one engine over one stream pair.
type Server struct {
	eng *engine.Engine
	out io.Writer

	wmu sync.Mutex // one message at a time on out

	pmu     sync.Mutex
	pending map[string]chan message
	nextID  atomic.Int64
}

// New returns a server for an engine built by the caller. The caller wires
// the engine's Read and Floor to the server with Options (see Hooks).
func New(out io.Writer) *Server {
	return &Server{out: out, pending: map[string]chan message{}}
}

// Attach sets the engine the server drives.
func (s *Server) Attach(e *engine.Engine) { s.eng = e }

// Read is an engine.ReadFunc that asks the client ("host/read").
func (s *Server) Read(ctx context.Context, key string) (any, error) {
	var v any
	err := s.call(ctx, "host/read", map[string]any{"key": key}, &v)
	return v, err
}

// Floor is an engine.FloorFunc that asks the client ("host/floor"); the
// client answers {refused: bool, reason: string}.
func (s *Server) Floor(ctx context.Context, c engine.FloorCall) (string, bool) {
	var v struct {
		Refused bool   `json:"refused"`
		Reason  string `json:"reason"`
	}
	marks := c.Marks
	if marks == nil {
		marks = []string{}
	}
	if err := s.call(ctx, "host/floor", map[string]any{"instance": c.Instance, "path": c.Path, "args": c.Args, "marks": marks}, &v); err != nil {
		return "the floor could not be asked: " + err.Error(), true
	}
	return v.Reason, v.Refused
}

// call sends a request to the client and waits for its answer.
func (s *Server) call(ctx context.Context, method string, params any, result any) error {
	id := fmt.Sprintf("e%d", s.nextID.Add(1))
	ch := make(chan message, 1)
	s.pmu.Lock()
	s.pending[`"`+id+`"`] = ch
	s.pmu.Unlock()
	defer func() {
		s.pmu.Lock()
		delete(s.pending, `"`+id+`"`)
		s.pmu.Unlock()
	}()
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	idRaw, _ := json.Marshal(id)
	if err := s.send(message{JSONRPC: "2.0", ID: idRaw, Method: method, Params: p}); err != nil {
		return err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return errors.New(m.Error.Message)
		}
		if result != nil && len(m.Result) > 0 {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Server) send(m message) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err = s.out.Write(append(data, '\n'))
	return err
}

// Serve reads messages from in until it ends or ctx is done.
func (s *Server) Serve(ctx context.Context, in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	var wg sync.WaitGroup
	defer wg.Wait()
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		if len(line) == 0 {
			continue
		}
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			_ = s.send(message{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: codeParse, Message: "parse error: " + err.Error()}})
			continue
		}
		if m.Method == "" { // an answer to one of our requests
			s.pmu.Lock()
			ch := s.pending[string(m.ID)]
			s.pmu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, rerr := s.dispatch(ctx, m.Method, m.Params)
			if len(m.ID) == 0 {
				return // a notification: no answer
			}
			out := message{JSONRPC: "2.0", ID: m.ID}
			if rerr != nil {
				out.Error = rerr
			} else {
				data, err := json.Marshal(res)
				if err != nil {
					out.Error = &rpcError{Code: codeEngine, Message: err.Error()}
				} else {
					out.Result = data
				}
			}
			_ = s.send(out)
		}()
	}
	return sc.Err()
}

type params struct {
	Instance      string   `json:"instance"`
	Bot           string   `json:"bot"`
	Kind          string   `json:"kind"`
	Session       string   `json:"session"`
	Parent        string   `json:"parent"`
	Child         string   `json:"child"`
	Path          string   `json:"path"`
	Effects       []string `json:"effects"`
	Args          any      `json:"args"`
	CallID        string   `json:"call_id"`
	Input         any      `json:"input"`
	ContextFresh  bool     `json:"context_fresh"`
	HostContinue  bool     `json:"host_continue"`
	Output        *string  `json:"output"`
	Addenda       []string `json:"addenda"`
	Note          string   `json:"note"`
	Owner         string   `json:"owner"`
	Method        string   `json:"method"`
	HostAuthority bool     `json:"host_authority"`
	Name          string   `json:"name"`
	Text          string   `json:"text"`
	ToTurn        int      `json:"to_turn"`
}

func (s *Server) instance(id string) (*engine.Instance, *rpcError) {
	i, ok := s.eng.Instance(id)
	if !ok {
		return nil, &rpcError{Code: codeEngine, Message: fmt.Sprintf("instance %q is not running (start it first)", id), Data: &errorData{Code: string(engine.CodeNotRunning)}}
	}
	return i, nil
}

func engErr(err error) *rpcError {
	r := &rpcError{Code: codeEngine, Message: err.Error()}
	if c := engine.CodeOf(err); c != "" {
		r.Data = &errorData{Code: string(c)}
	}
	return r
}

func (s *Server) dispatch(ctx context.Context, method string, raw json.RawMessage) (any, *rpcError) {
	var p params
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, &rpcError{Code: codeInvalidParams, Message: "params: " + err.Error()}
		}
	}
	switch method {
	case "start":
		i, err := s.eng.Start(ctx, engine.StartOptions{ID: p.Instance, Bot: p.Bot, Kind: p.Kind, Session: p.Session, Parent: p.Parent})
		if err != nil {
			return nil, engErr(err)
		}
		return map[string]any{"instance": i.ID(), "session": i.Session(), "bot": i.Bot()}, nil
	case "restart":
		i, err := s.eng.Restart(ctx, p.Instance)
		if err != nil {
			return nil, engErr(err)
		}
		return map[string]any{"instance": i.ID(), "session": i.Session()}, nil
	case "tools/register":
		path := p.Path
		err := s.eng.RegisterTool(engine.HostTool{Path: path, Effects: p.Effects, Core: func(ctx context.Context, c engine.CoreCall) (any, error) {
			var v any
			err := s.call(ctx, "host/core", map[string]any{"path": path, "args": c.Args}, &v)
			return v, err
		}})
		if err != nil {
			return nil, engErr(err)
		}
		return map[string]any{}, nil
	}
	i, rerr := s.instance(p.Instance)
	if rerr != nil {
		if method == "stop" || method == "tool" || method == "turn/begin" || method == "round/begin" || method == "round/end" ||
			method == "turn/end" || method == "consume" || method == "method" || method == "command" || method == "spawn" ||
			method == "attune" || method == "replay" || method == "hydrate" || method == "rollback" || method == "state" || method == "reset" {
			return nil, rerr
		}
		return nil, &rpcError{Code: codeMethodNotFound, Message: "no method " + method}
	}
	switch method {
	case "stop":
		i.Stop()
		return map[string]any{}, nil
	case "tool":
		return outcome(i.Tool(ctx, engine.ToolCall{Path: p.Path, Args: p.Args, CallID: p.CallID})), nil
	case "turn/begin":
		return boundary(i.BeginTurn(ctx, engine.TurnInput{Input: p.Input, ContextFresh: p.ContextFresh}))
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
		return map[string]any{}, nil
	case "method":
		o := i.Method(ctx, engine.MethodCall{Owner: p.Owner, Method: p.Method, Input: p.Input, CallID: p.CallID, HostAuthority: p.HostAuthority})
		return methodOutcome(o), nil
	case "command":
		r := i.Command(ctx, p.Name, p.Text)
		return map[string]any{"status": r.Status, "error": omit(r.Error), "notes": notes(r.Notes)}, nil
	case "spawn":
		c, err := i.Spawn(ctx, engine.SpawnOptions{ID: p.Child, Bot: p.Bot, Role: p.Kind})
		if err != nil {
			return nil, engErr(err)
		}
		return map[string]any{"instance": c.ID(), "session": c.Session()}, nil
	case "attune":
		if err := i.Attune(ctx); err != nil {
			return nil, engErr(err)
		}
		return map[string]any{}, nil
	case "replay":
		r, err := i.Replay(ctx)
		if err != nil {
			return nil, engErr(err)
		}
		diverged := append([]engine.Divergence{}, r.Diverged...)
		return map[string]any{"notes": notes(r.Notes), "steps": r.Steps, "diverged": diverged}, nil
	case "hydrate":
		if err := i.Hydrate(ctx); err != nil {
			return nil, engErr(err)
		}
		return map[string]any{}, nil
	case "rollback":
		if err := i.Rollback(ctx, p.ToTurn); err != nil {
			return nil, engErr(err)
		}
		return map[string]any{}, nil
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
		return map[string]any{}, nil
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "no method " + method}
}

func omit(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func outcome(o engine.Outcome) map[string]any {
	m := map[string]any{"status": o.Status}
	if o.CallID != "" { // R4.11: a call that got no id (outside a turn, an unknown tool) has none
		m["call_id"] = o.CallID
	}
	if o.Status == engine.StatusOK {
		m["result"] = o.Result
		d := o.Diagnostics
		if d == nil {
			d = []string{}
		}
		m["diagnostics"] = d
	}
	if o.Reason != "" {
		m["reason"] = o.Reason
	}
	if o.RefusedBy != "" {
		m["refused_by"] = o.RefusedBy
	}
	if o.Error != "" {
		m["error"] = o.Error
	}
	return m
}

// methodOutcome is a method call's outcome with only the fields that apply
// (R4.11).
func methodOutcome(o engine.MethodOutcome) map[string]any {
	m := map[string]any{"status": o.Status, "revision": o.Revision}
	if o.Status == engine.StatusOK {
		m["result"] = o.Result
	}
	for k, v := range map[string]string{"reason": o.Reason, "refused_by": o.RefusedBy, "error": o.Error, "call_id": o.CallID} {
		if v != "" {
			m[k] = v
		}
	}
	if len(o.Diagnostics) > 0 {
		m["diagnostics"] = o.Diagnostics
	}
	return m
}

func notes(ns []engine.Note) []map[string]any {
	out := make([]map[string]any, 0, len(ns))
	for _, n := range ns {
		out = append(out, map[string]any{"id": n.ID, "kind": n.Kind, "text": n.Text, "program": n.Program})
	}
	return out
}

func boundary(r engine.BoundaryResult, err error) (any, *rpcError) {
	if err != nil {
		return nil, engErr(err)
	}
	m := map[string]any{"status": r.Status, "turn": r.Turn, "round": r.Round, "notes": notes(r.Notes), "continue": r.Continue}
	if r.Reason != "" {
		m["reason"] = r.Reason
	}
	if r.Error != "" {
		m["error"] = r.Error
	}
	if r.LoopEnd != nil {
		m["loop_end"] = map[string]any{"addenda": r.LoopEnd.Addenda, "notes": notes(r.LoopEnd.Notes)}
	}
	return m, nil
}
