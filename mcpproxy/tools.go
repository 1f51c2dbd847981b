package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/internal/jsonscan"
)

// ToolPath is the tool chain path of an upstream's tool: mcp/UPSTREAM/TOOL,
// the tool's name encoded as one segment (config.ToolSegment): a name
// like a/b or ../etc never leaves the mcp/UPSTREAM/* of the effects
// entries and guards that cover the upstream's tools.
func ToolPath(upstream, tool string) string {
	return "mcp/" + upstream + "/" + config.ToolSegment(tool)
}

// listedTool is one tool the client may see.
type listedTool struct {
	name string
	obj  json.RawMessage // the upstream's tool object, as it sent it; nil for a defined tool
	info engine.ToolInfo
	tgt  toolTarget
}

// resolveTools lists every upstream's tools, registers each as a host tool whose
// core is the upstream's tools/call, and adds the pin's defined tools.
// Tools outside the ceiling are returned too, with info.Allowed false.
func (p *proxy) resolveTools(ctx context.Context) ([]listedTool, error) {
	type upTool struct {
		up   *upstream
		name string
		obj  json.RawMessage
	}
	var found []upTool
	for _, up := range p.ups {
		if !up.alive() {
			continue // its tools are gone with it
		}
		items, err := listAll(ctx, up, "tools/list", "tools")
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			var t struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(it, &t); err != nil || t.Name == "" {
				return nil, &UpstreamError{Upstream: up.name, Method: "tools/list", Err: fmt.Errorf("a tool without a name: %s", clip(it))}
			}
			found = append(found, upTool{up: up, name: t.Name, obj: it})
			if err := p.register(up, t.Name); err != nil {
				return nil, err
			}
		}
	}
	infos, err := p.inst.Tools()
	if err != nil {
		return nil, err
	}
	byPath := map[string]engine.ToolInfo{}
	for _, ti := range infos {
		byPath[ti.Path] = ti
	}
	var out []listedTool
	taken := map[string]bool{}
	for _, f := range found {
		name := f.name
		if len(p.ups) > 1 {
			name = f.up.name + "__" + f.name
		}
		path := ToolPath(f.up.name, f.name)
		taken[name] = true
		out = append(out, listedTool{name: name, obj: f.obj, info: byPath[path], tgt: toolTarget{path: path, up: f.up, tool: f.name}})
	}
	for _, ti := range infos {
		if !ti.Defined || isUpstreamPath(out, ti.Path) {
			continue
		}
		name := ti.Path[strings.LastIndexByte(ti.Path, '/')+1:]
		if taken[name] || name == "" {
			name = strings.ReplaceAll(ti.Path, "/", "__")
		}
		taken[name] = true
		out = append(out, listedTool{name: name, info: ti, tgt: toolTarget{path: ti.Path}})
	}
	p.mu.Lock()
	p.tools = map[string]toolTarget{}
	for _, t := range out {
		p.tools[t.name] = t.tgt
	}
	p.mu.Unlock()
	return out, nil
}

func isUpstreamPath(ts []listedTool, path string) bool {
	for _, t := range ts {
		if t.tgt.up != nil && t.tgt.path == path {
			return true
		}
	}
	return false
}

// definedTools returns the pin's define/tool paths inside the ceiling.
func (p *proxy) definedTools() ([]string, error) {
	infos, err := p.inst.Tools()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ti := range infos {
		if ti.Defined && ti.Allowed {
			out = append(out, ti.Path)
		}
	}
	return out, nil
}

// register makes an upstream's tool a host tool of the engine, with the
// effects [harness.mcp.tools] gives its path.
func (p *proxy) register(up *upstream, tool string) error {
	path := ToolPath(up.name, tool)
	effects := p.cfg.Effects(path)
	p.mu.Lock()
	old, ok := p.registered[path]
	p.registered[path] = effects
	p.mu.Unlock()
	if ok && slices.Equal(old, effects) {
		return nil
	}
	return p.e.RegisterTool(engine.HostTool{Path: path, Effects: effects, Core: p.core(up, tool)})
}

// listTools answers tools/list: the upstreams' tools inside the ceiling,
// as they sent them, then the pin's defined tools.
func (p *proxy) listTools(ctx context.Context) (json.RawMessage, error) {
	ts, err := p.resolveTools(ctx)
	if err != nil {
		return nil, err
	}
	list := []any{}
	for _, t := range ts {
		if !t.info.Allowed {
			continue
		}
		switch {
		case t.obj != nil && len(p.ups) == 1:
			list = append(list, t.obj)
		case t.obj != nil:
			var m map[string]any
			if err := decode(t.obj, &m); err != nil {
				return nil, err
			}
			m["name"] = t.name
			list = append(list, m)
		default:
			input := t.info.Input
			if input == nil {
				input = map[string]any{"type": "object"}
			}
			m := map[string]any{
				"name":        t.name,
				"description": "attune tool " + t.info.Path,
				"inputSchema": input,
			}
			if t.info.Output != nil {
				m["outputSchema"] = t.info.Output
			}
			list = append(list, m)
		}
	}
	return json.Marshal(map[string]any{"tools": list})
}

// callParams are the params of tools/call.
type callParams struct {
	Name      string          `json:"name"`
	Arguments any             `json:"arguments"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// callSlot carries what the chain's core received from the upstream for
// the call the client made: the result is relayed as the upstream sent it.
type callSlot struct {
	id    string          // the call id the proxy gave the chain
	reqID json.RawMessage // the client's request id, for an answer sent from the core
	meta  json.RawMessage // the client's _meta, passed on
	// ctx is the client's request: the core waits on it for a
	// cancellation, and on its own ctx's deadline (callUntil)
	ctx context.Context
	// args are the arguments the chain was given, decoded from rawArgs:
	// when the core receives the same map (no guard rewrote them), the
	// upstream receives rawArgs, the client's own text
	args    map[string]any
	rawArgs json.RawMessage

	mu      sync.Mutex
	raw     json.RawMessage
	isError bool
	// replied: the core answered the client itself (answerEarly)
	replied bool
}

type slotKey struct{}

// core is an upstream tool's core: the upstream's tools/call with the
// arguments the chain hands it (a guard's rewrite included).
func (p *proxy) core(up *upstream, tool string) engine.CoreFunc {
	return func(ctx context.Context, c engine.CoreCall) (any, error) {
		args := c.Args
		slot, _ := ctx.Value(slotKey{}).(*callSlot)
		if slot != nil && slot.id != c.CallID {
			slot = nil // a call a behavior made inside the client's call
		}
		var data []byte
		if slot != nil && slot.rawArgs != nil && sameMap(args, slot.args) {
			// the arguments the client sent, untouched by the chain: their text
			data = append(data, `{"name":`...)
			data = appendString(data, tool)
			data = append(data, `,"arguments":`...)
			data = append(data, slot.rawArgs...)
			if len(slot.meta) > 0 {
				data = append(data, `,"_meta":`...)
				data = append(data, slot.meta...)
			}
			data = append(data, '}')
		} else {
			params := callParams{Name: tool, Arguments: args}
			if args == nil {
				params.Arguments = map[string]any{}
			}
			if slot != nil {
				params.Meta = slot.meta
			}
			var err error
			if data, err = json.Marshal(&params); err != nil {
				return nil, fmt.Errorf("the arguments do not encode as JSON: %v", err)
			}
		}
		var err error
		var raw json.RawMessage
		if slot != nil {
			until, _ := ctx.Deadline()
			var early func(*response)
			if slot.reqID != nil {
				// the answer leaves from the upstream's read loop when it can
				early = func(r *response) {
					if r.Error == nil && notToolError(r.Result) && p.answerEarly(ctx, slot, r.Result) {
						slot.mu.Lock()
						slot.replied = true
						slot.mu.Unlock()
					}
				}
			}
			raw, err = up.callEarly(slot.ctx, until, "tools/call", data, nil, early)
		} else {
			raw, err = up.call(ctx, "tools/call", data)
		}
		if err != nil {
			return nil, err
		}
		res, _ := decodeObject(raw)
		if res == nil {
			return nil, &UpstreamError{Upstream: up.name, Method: "tools/call", Err: fmt.Errorf("its result is not an object: %s", clip(raw))}
		}
		isErr, _ := res["isError"].(bool)
		if slot != nil {
			slot.mu.Lock()
			replied := slot.replied
			slot.mu.Unlock()
			if !replied && !isErr && p.answerEarly(ctx, slot, raw) {
				replied = true
			}
			slot.mu.Lock()
			slot.raw, slot.isError, slot.replied = raw, isErr, replied
			slot.mu.Unlock()
		}
		if isErr {
			return nil, fmt.Errorf("%s", resultText(res))
		}
		return res, nil
	}
}

// answerEarly sends the client the upstream's result of its call from the
// core, before the engine's work after the core (the journal entries of
// the call, the guards' unwinding, the chain's end), when that answer is
// already the one callTool would send: the chain committed the core's
// success (engine.Commit: every guard passed the call on with
// "return invoke(...)", no result guard or :post hook), no round boundary
// is due after the call (no round guard or hook, no note waiting to be
// placed, whose text the answer would carry), and it is the client's own
// call. That work is then off the call's path; it still runs before the
// request's worker takes another request.
func (p *proxy) answerEarly(ctx context.Context, slot *callSlot, raw json.RawMessage) bool {
	if slot.reqID == nil || !p.inst.Turn().InRound || p.inst.RoundWork() || !engine.Commit(ctx) {
		return false
	}
	_ = p.client.write(&response{ID: slot.reqID, Result: raw})
	return true
}

var isErrorField = []string{"isError"}

// notToolError reports that a tools/call result is a JSON object whose
// isError is not true, as decodeObject and the core read it; false when
// it cannot tell (the core then judges the decoded result).
func notToolError(raw json.RawMessage) bool {
	var out [1][]byte
	ok, err := jsonscan.Members(raw, isErrorField, out[:], jsonscan.Options{Dups: true})
	return ok && err == nil && string(out[0]) != "true"
}

// sameMap reports whether a is the map m itself.
func sameMap(a any, m map[string]any) bool {
	am, ok := a.(map[string]any)
	return ok && m != nil && reflect.ValueOf(am).UnsafePointer() == reflect.ValueOf(m).UnsafePointer()
}

// decodeObject decodes a JSON object as json.Unmarshal into a
// map[string]any does; nil when data is not an object.
func decodeObject(data []byte) (map[string]any, error) {
	if v, ok := parseAny(data); ok {
		m, _ := v.(map[string]any)
		return m, nil
	}
	var m map[string]any
	err := json.Unmarshal(data, &m)
	return m, err
}

// resultText joins the text content of a tool result.
func resultText(res map[string]any) string {
	var parts []string
	content, _ := res["content"].([]any)
	for _, c := range content {
		if m, ok := c.(map[string]any); ok && m["type"] == "text" {
			if s, ok := m["text"].(string); ok {
				parts = append(parts, s)
			}
		}
	}
	if len(parts) == 0 {
		return "the tool reported an error"
	}
	return strings.Join(parts, "\n")
}

// callTool answers tools/call: the tool chain at the tool's path; then
// the round ends and the next begins, and the notes placed into it are
// appended to the result with the chain's diagnostics.
func (p *proxy) callTool(ctx context.Context, reqID, params json.RawMessage) (json.RawMessage, error) {
	var c callParams // one pass: the arguments are decoded with the rest
	rawArgs, faithful, ok, err := fastCallParams(params, &c)
	if err == nil && !ok {
		// encoding/json's turn; a name given twice is refused first
		_, err = jsonscan.Valid(params, jsonscan.Options{Dups: true})
		rawArgs, faithful, c = nil, false, callParams{}
		if err == nil && json.Unmarshal(params, &c) != nil {
			c.Name = ""
		}
	}
	var dup *jsonscan.DupError
	if errors.As(err, &dup) {
		// readers differ on which of the two counts: the guard would judge
		// one and a first-wins upstream run the other
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("tools/call: the params name member %q twice in one object (at byte %d of params): send each member once (readers differ on which one counts)", dup.Name, dup.At)}
	}
	if !faithful {
		rawArgs = nil // the upstream gets the judged value, encoded again
	}
	if c.Name == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call wants params {\"name\": TOOL, \"arguments\": {...}}, got " + clip(params)}
	}
	var args any = map[string]any{}
	switch a := c.Arguments.(type) {
	case map[string]any:
		args = a
	case nil:
	default:
		b, _ := json.Marshal(a)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call of " + c.Name + ": arguments must be a JSON object, got " + clip(b)}
	}
	p.mu.Lock()
	tgt, ok := p.tools[c.Name]
	p.mu.Unlock()
	if !ok { // the client did not list, or the list changed
		if _, err := p.resolveTools(ctx); err != nil {
			return nil, err
		}
		p.mu.Lock()
		tgt, ok = p.tools[c.Name]
		p.mu.Unlock()
	}
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool " + c.Name}
	}
	slot := &callSlot{id: p.inst.ID() + "/mcp-" + strconv.FormatInt(p.calls.Add(1), 10), reqID: reqID, meta: c.Meta, ctx: ctx}
	if m, ok := args.(map[string]any); ok && c.Arguments != nil {
		slot.args, slot.rawArgs = m, rawArgs
	}
	out := p.inst.Tool(context.WithValue(ctx, slotKey{}, slot), engine.ToolCall{Path: tgt.path, Args: args, CallID: slot.id})
	slot.mu.Lock()
	replied := slot.replied
	slot.mu.Unlock()
	if replied {
		// answered from the core (answerEarly): the outcome is the
		// committed success, and no round boundary was due
		if out.Status != engine.StatusOK || out.Replaced || len(out.Diagnostics) > 0 {
			p.logf("tools/call %s: answered with the upstream's result, but the call's outcome is %s %s%s", c.Name, out.Status, out.Reason, out.Error)
		}
		return nil, errRelayed
	}
	notes := p.nextRound(ctx)
	var extra []string
	extra = append(extra, out.Diagnostics...)
	extra = append(extra, notes...)
	slot.mu.Lock()
	raw, isErr := slot.raw, slot.isError
	slot.mu.Unlock()
	var base json.RawMessage
	switch {
	case out.Status == engine.StatusOK && raw != nil && !isErr && !out.Replaced:
		base = raw
	case out.Status == engine.StatusOK && out.Replaced: // a result guard's replace
		base = replacedResult(out.Result)
	case out.Status == engine.StatusOK:
		base = definedResult(out.Result)
	case out.Status == engine.StatusFailed && raw != nil && isErr:
		base = raw // the upstream's own tool error
	case out.Status == engine.StatusRefused:
		base = errorResult(fmt.Sprintf("refused by %s: %s", out.RefusedBy, out.Reason))
	default:
		base = errorResult("the call failed: " + out.Error)
	}
	if len(extra) == 0 {
		return base, nil
	}
	var res map[string]any
	if err := decode(base, &res); err != nil {
		return nil, err
	}
	content, _ := res["content"].([]any)
	for _, s := range extra {
		content = append(content, map[string]any{"type": "text", "text": s})
	}
	res["content"] = content
	return json.Marshal(res)
}

// replacedResult is a result guard's new result: an MCP result itself
// (with content) as it is, anything else as a defined tool's result.
func replacedResult(v any) json.RawMessage {
	if m, ok := v.(map[string]any); ok {
		if _, ok := m["content"]; ok {
			if b, err := json.Marshal(m); err == nil {
				return b
			}
		}
	}
	return definedResult(v)
}

func errorResult(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": true})
	return b
}

// definedResult renders what a define/tool returned: a string as text,
// other values as JSON text, a map also as structured content.
func definedResult(v any) json.RawMessage {
	res := map[string]any{}
	switch x := v.(type) {
	case string:
		res["content"] = []any{map[string]any{"type": "text", "text": x}}
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return errorResult("the tool's result does not encode as JSON: " + err.Error())
		}
		res["content"] = []any{map[string]any{"type": "text", "text": string(b)}}
		if _, ok := x.(map[string]any); ok {
			res["structuredContent"] = x
		}
	}
	b, _ := json.Marshal(res)
	return b
}

// nextRound ends the round and begins the next, returning the text of the
// notes placed into it; it does nothing when the pin has no round guard or
// hook and no note waits to be placed.
func (p *proxy) nextRound(ctx context.Context) []string {
	p.bmu.Lock()
	defer p.bmu.Unlock()
	ctx = context.WithoutCancel(ctx)
	inRound := p.inst.Turn().InRound
	if inRound && !p.inst.RoundWork() {
		return nil // no round hook and no note to place: the round goes on
	}
	if inRound {
		if _, err := p.inst.EndRound(ctx, engine.RoundEnd{HostContinue: true}); err != nil {
			p.logf("ending the round: %v", err)
		}
	}
	r, err := p.inst.BeginRound(ctx)
	if err != nil {
		p.logf("beginning a round: %v", err)
		return nil
	}
	var out []string
	for _, n := range r.Notes {
		out = append(out, n.Text)
	}
	return out
}
