package mcpproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/harness"
	wire "github.com/attune-dev/attune/internal/jsonrpc"
	"github.com/attune-dev/attune/internal/workers"
)

// DefaultName names the upstream of `attune mcp -- CMD` when --name is not
// given.
const DefaultName = "upstream"

// ImplicitBot is the bot a configuration without bots gets: no behaviors
// and an empty ceiling (a tool with effects is refused).
const ImplicitBot = "mcp"

// JSON-RPC error codes of the MCP SDKs for a closed connection and a
// request that timed out.
const (
	codeConnectionClosed = -32000
	codeRequestTimeout   = -32001
)

// Options configure one proxy serving one client connection.
type Options struct {
	// Config is the loaded configuration; [harness.mcp] and the bot's
	// behaviors and ceiling apply.
	Config *config.Config
	// Bot names the configured bot; "" is the configuration's first bot
	// (or ImplicitBot when it has none).
	Bot string
	// Upstreams are the servers to relay, at least one. With one, the
	// client sees its tools under their own names; with several, as
	// NAME__TOOL.
	Upstreams []Upstream
	// In and Out are the client's side of the connection.
	In  io.Reader
	Out io.Writer
	// Stderr receives the upstreams' standard error and the proxy's
	// diagnostics; nil discards them.
	Stderr io.Writer
	// Store overrides the configured store.
	Store engine.Store
	// ID names the connection's instance; "" is "mcp-" and 16 random hex
	// digits. An instance is started once: a stored id is refused.
	ID string
	// Grace is how long an upstream gets to exit after its input closes,
	// and again after SIGTERM; 0 is two seconds.
	Grace time.Duration
}

var upstreamName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// proxy is the state of one client connection.
type proxy struct {
	o      Options
	cfg    config.MCP
	client *conn
	ups    []*upstream
	byName map[string]*upstream
	e      *engine.Engine
	inst   *engine.Instance
	stderr io.Writer

	bmu sync.Mutex // round boundaries

	mu         sync.Mutex
	tools      map[string]toolTarget // the name the client calls -> target
	registered map[string][]string   // host tool path -> the effects registered
	owners     map[string]*upstream  // "uri:U", "prompt:P", "template:T" -> upstream
	inflight   map[string]context.CancelFunc
	toClient   wire.Calls[fromUpstream] // upstreams' requests relayed to the client, by the proxy's id
	handlers   sync.WaitGroup           // guarded by mu for Add: none after stopped
	stopped    bool
	workers    *workers.Pool // requests' handlers and the client's reading (run)
	calls      atomic.Int64  // tools/call requests, for their call ids
}

// toolTarget is what a tool name the client calls resolves to.
type toolTarget struct {
	path string
	up   *upstream // nil for a define/tool of the pin
	tool string    // the upstream's name of the tool
}

// fromUpstream is a request an upstream sent, relayed to the client.
type fromUpstream struct {
	up *upstream
	id json.RawMessage
}

// Serve relays one client connection (o.In, o.Out) to the upstreams until
// the client closes its side or ctx ends, then ends the turn, the
// upstreams and the engine.
func Serve(ctx context.Context, o Options) error {
	if o.Config == nil {
		return errors.New("attune mcp: no configuration")
	}
	if len(o.Upstreams) == 0 {
		return errors.New("attune mcp: no upstream server: give its command after --, or --upstream NAME=CMD")
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Grace <= 0 {
		o.Grace = 2 * time.Second
	}
	seen := map[string]bool{}
	for _, u := range o.Upstreams {
		if !upstreamName().MatchString(u.Name) {
			return fmt.Errorf("attune mcp: upstream name %q: use letters, digits, '_' and '-'", u.Name)
		}
		if seen[u.Name] {
			return fmt.Errorf("attune mcp: two upstreams are named %q", u.Name)
		}
		seen[u.Name] = true
	}
	cfg, bot, err := botConfig(o.Config, o.Bot)
	if err != nil {
		return err
	}
	p := &proxy{
		o: o, cfg: cfg.MCP, stderr: o.Stderr,
		client:     newConn(rawReader(o.In), rawWriter(o.Out), cfg.MCP.MaxMessage),
		byName:     map[string]*upstream{},
		tools:      map[string]toolTarget{},
		registered: map[string][]string{},
		owners:     map[string]*upstream{},
		inflight:   map[string]context.CancelFunc{},
		workers:    workers.New(0),
	}
	logger := slog.New(slog.NewTextHandler(o.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// attune is the host: it answers admit/read itself ([harness.reads]), as
	// for a hook event
	p.e, err = engine.New(ctx, engine.Options{Config: cfg, Store: o.Store, Logger: logger, JournalDelay: cfg.MCP.JournalDelay,
		Read: harness.HostReads(cfg, nil)})
	if err != nil {
		return err
	}
	defer p.e.Close()
	id := o.ID
	if id == "" {
		var idb [8]byte
		_, _ = rand.Read(idb[:])
		id = "mcp-" + hex.EncodeToString(idb[:])
	}
	p.inst, err = p.e.Start(ctx, engine.StartOptions{ID: id, Bot: bot})
	if err != nil {
		return err
	}
	names := make([]any, 0, len(o.Upstreams))
	for _, u := range o.Upstreams {
		names = append(names, u.Name)
	}
	// one turn for the connection's life: every call is journaled
	if r, err := p.inst.BeginTurn(ctx, engine.TurnInput{Input: map[string]any{"harness": "mcp", "upstreams": names}}); err != nil {
		return err
	} else if r.Status != engine.StatusOK {
		return fmt.Errorf("attune mcp: the turn did not open: %s%s", r.Reason, r.Error)
	}
	if _, err := p.inst.BeginRound(ctx); err != nil {
		return err
	}
	for _, u := range o.Upstreams {
		up, err := startUpstream(u, p.cfg.CallTimeout, p.cfg.StartTimeout, p.cfg.MaxMessage, o.Stderr, p.logf)
		if err != nil {
			p.closeUpstreams()
			return err
		}
		up.onRequest, up.onNotify = p.upstreamRequest, p.upstreamNotify
		p.ups = append(p.ups, up)
		p.byName[u.Name] = up
		go up.run()
	}
	err = p.serve(ctx)
	p.closeUpstreams()
	if _, endErr := p.inst.EndTurn(context.WithoutCancel(ctx)); endErr != nil && err == nil {
		err = endErr
	}
	return err
}

// botConfig returns the configuration to run and the bot to start.
func botConfig(cfg *config.Config, bot string) (*config.Config, string, error) {
	if bot != "" && (bot != ImplicitBot || len(cfg.BotOrder) > 0) {
		if _, ok := cfg.Bots[bot]; !ok {
			if len(cfg.BotOrder) == 0 {
				return nil, "", fmt.Errorf("attune mcp: %s has no bot %q: it defines no bots; leave out --bot to run the bot %s (no behaviors, an empty ceiling)", where(cfg), bot, ImplicitBot)
			}
			return nil, "", fmt.Errorf("attune mcp: %s has no bot %q (bots: %s)", where(cfg), bot, strings.Join(cfg.BotOrder, ", "))
		}
		return cfg, bot, nil
	}
	if len(cfg.BotOrder) > 0 {
		return cfg, cfg.BotOrder[0], nil
	}
	c := *cfg
	c.Bots = map[string]*config.Bot{ImplicitBot: {
		Name: ImplicitBot, Behaviors: []string{}, Ceiling: []string{}, Grants: []string{},
		Config: map[string]map[string]any{},
	}}
	c.BotOrder = []string{ImplicitBot}
	return &c, ImplicitBot, nil
}

func where(cfg *config.Config) string {
	if cfg.File != "" {
		return cfg.File
	}
	return "the configuration"
}

func (p *proxy) logf(format string, args ...any) {
	fmt.Fprintf(p.stderr, "attune mcp: "+format+"\n", args...)
}

func (p *proxy) closeUpstreams() {
	var wg sync.WaitGroup
	for _, up := range p.ups {
		wg.Add(1)
		go func() { defer wg.Done(); up.close(p.o.Grace) }()
	}
	wg.Wait()
}

// serve reads the client's messages until its side closes. The goroutine
// that reads a request runs it itself, once it has handed the reading on
// to an idle worker (or a new one): the request reaches its handler with
// no hand-over between, and the worker that reads next is not on the
// request's path. A hand-over of each request to a waiting worker cost
// tens of microseconds per call (the worker woken, often on another
// thread).
func (p *proxy) serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		p.mu.Lock()
		p.stopped = true // no handler starts after this
		p.mu.Unlock()
		cancel()
		p.handlers.Wait()
		p.workers.Close()
	}()
	errs := make(chan error, 1)
	p.run(func() { p.read(ctx, errs) })
	select {
	case <-ctx.Done():
		return nil
	case err := <-errs:
		if errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("attune mcp: reading the client: %w", err)
	}
}

// read reads the client's messages until a request, which it runs after
// handing the reading on, or until the client's side ends (reported on
// errs).
func (p *proxy) read(ctx context.Context, errs chan<- error) {
	for ctx.Err() == nil {
		msg, err := p.client.read()
		var bad *BadMessageError
		if errors.As(err, &bad) {
			p.badClientMessage(bad)
			continue
		}
		if err != nil {
			errs <- err
			return
		}
		switch m := msg.(type) {
		case *request:
			if !m.isCall() {
				p.clientNotify(m)
				continue
			}
			job := p.clientRequest(ctx, m)
			p.run(func() { p.read(ctx, errs) })
			if job != nil {
				job()
			}
			return
		case *response:
			p.clientResponse(m)
		}
	}
}

// badClientMessage answers a line that is not JSON-RPC with an error, as
// JSON-RPC 2.0 says, and goes on. When the id cannot be read the answer
// has no id member: MCP's schema has no null id (docs/mcp.md).
func (p *proxy) badClientMessage(bad *BadMessageError) {
	p.logf("the client sent %v", bad)
	// -32700 for a line that is not JSON; -32600 for JSON that is not a
	// request (a batch, a number, a wrong version) and for a line too long
	code := jsonrpc.CodeInvalidRequest
	var syn *json.SyntaxError
	if !bad.TooLong && errors.As(bad.Err, &syn) {
		code = jsonrpc.CodeParseError
	}
	_ = p.client.write(&response{ID: bad.ID, Error: &jsonrpc.Error{Code: int64(code), Message: "attune mcp: " + bad.Error()}})
}

// idKey names a request id in maps: a number and a string never share one.
func idKey(id json.RawMessage) string { return wire.Key(id) }

// clientRequest returns the handler of one request, to run on a goroutine
// of its own (nil once the connection is stopping); the client may cancel
// it with notifications/cancelled from the moment it returns.
func (p *proxy) clientRequest(ctx context.Context, req *request) func() {
	rctx, cancel := context.WithCancel(ctx)
	key := idKey(req.ID)
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		cancel()
		return nil
	}
	p.inflight[key] = cancel
	p.handlers.Add(1)
	p.mu.Unlock()
	return func() {
		defer p.handlers.Done()
		defer func() {
			p.mu.Lock()
			delete(p.inflight, key)
			p.mu.Unlock()
			cancel()
		}()
		result, err := p.dispatch(rctx, req)
		if errors.Is(err, errRelayed) {
			return // the upstream's answer went to the client as it came
		}
		if rctx.Err() != nil && ctx.Err() == nil {
			return // cancelled by the client: no answer (MCP)
		}
		_ = p.client.write(&response{ID: req.ID, Result: result, Error: wireError(err)})
	}
}

// run runs a job (a request's handler, or reading the client) on an idle
// worker of the pool, or on a new one when none is idle. Workers live as
// long as the connection (internal/workers says why).
func (p *proxy) run(job func()) { p.workers.Go(job) }

// wireError is what the client receives for err: an upstream's own error
// as it sent it, else a JSON-RPC error naming the upstream and the cause.
func wireError(err error) *jsonrpc.Error {
	if err == nil {
		return nil
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		var ue *UpstreamError
		if errors.As(err, &ue) && ue.Err == we {
			return we
		}
		return &jsonrpc.Error{Code: we.Code, Message: "attune mcp: " + err.Error(), Data: we.Data}
	}
	code := int64(jsonrpc.CodeInternalError)
	switch {
	case errors.Is(err, ErrTimeout):
		code = codeRequestTimeout
	case errors.Is(err, ErrUpstreamGone):
		code = codeConnectionClosed
	}
	return &jsonrpc.Error{Code: code, Message: "attune mcp: " + err.Error()}
}

func (p *proxy) dispatch(ctx context.Context, req *request) (json.RawMessage, error) {
	switch req.Method {
	case "initialize":
		return p.initialize(ctx, req.ID, req.Params)
	case "ping":
		return json.RawMessage(`{}`), nil
	case "tools/list":
		return p.listTools(ctx)
	case "tools/call":
		return p.callTool(ctx, req.ID, req.Params)
	}
	if len(p.ups) == 1 {
		return p.ups[0].callRelay(ctx, req.Method, req.Params, p.relayTo(req.ID))
	}
	return p.forward(ctx, req.Method, req.Params)
}

// relayTo sends an upstream's answer on to the client under the client's
// id, from the upstream's read loop: what the upstream sends after it
// (a notification) reaches the client after it too.
func (p *proxy) relayTo(id json.RawMessage) func(*response) bool {
	return func(r *response) bool {
		_ = p.client.write(&response{ID: id, Result: r.Result, Error: r.Error})
		return true
	}
}

func (p *proxy) clientNotify(n *request) {
	if n.Method == "notifications/cancelled" {
		var c struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(n.Params, &c) == nil && wire.ValidID(c.RequestID) {
			p.mu.Lock()
			cancel := p.inflight[idKey(wire.Compact(c.RequestID))]
			p.mu.Unlock()
			if cancel != nil {
				cancel() // the request's upstream call sends its own cancellation
			}
		}
		return
	}
	for _, up := range p.ups {
		_ = up.notify(n.Method, n.Params)
	}
}

func (p *proxy) clientResponse(r *response) {
	var f fromUpstream
	n, ok := callID(r.ID)
	if ok {
		f, ok = p.toClient.Take(n)
	}
	if !ok {
		p.logf("the client answered request %s, which was never sent", r.ID)
		return
	}
	f.up.respond(&response{ID: f.id, Result: r.Result, Error: r.Error})
}

// upstreamRequest relays a request of an upstream (sampling, roots,
// elicitation) to the client under an id of the proxy's own.
func (p *proxy) upstreamRequest(up *upstream, req *request) {
	id, ok := p.toClient.Add(fromUpstream{up: up, id: req.ID})
	if !ok || p.client.write(&request{n: id, Method: req.Method, Params: req.Params}) != nil {
		p.toClient.Take(id)
		up.respond(&response{ID: req.ID, Error: &jsonrpc.Error{Code: codeConnectionClosed, Message: "attune mcp: the client is gone"}})
	}
}

// upstreamNotify relays a notification of an upstream to the client; a
// cancellation names the upstream's request by the id the client knows.
func (p *proxy) upstreamNotify(up *upstream, n *request) {
	if n.Method == "notifications/cancelled" {
		var c map[string]json.RawMessage
		if json.Unmarshal(n.Params, &c) != nil || !wire.ValidID(c["requestId"]) {
			return
		}
		key := idKey(wire.Compact(c["requestId"]))
		var found int64
		p.toClient.TakeIf(func(pid int64, f fromUpstream) bool {
			if f.up == up && idKey(f.id) == key {
				found = pid
				return true
			}
			return false
		})
		if found == 0 {
			return
		}
		c["requestId"] = intID(found)
		params, _ := json.Marshal(c)
		_ = p.client.write(&request{Method: n.Method, Params: params})
		return
	}
	_ = p.client.write(n)
}

// decode decodes JSON keeping numbers as written (for results relayed).
func decode(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	return d.Decode(v)
}

// initialize forwards the client's initialize to every upstream and
// answers with the upstream's result (one upstream) or their merge.
func (p *proxy) initialize(ctx context.Context, id json.RawMessage, params json.RawMessage) (json.RawMessage, error) {
	defined, err := p.definedTools()
	if err != nil {
		return nil, err
	}
	results := make([]map[string]any, len(p.ups))
	for k, up := range p.ups {
		var relay func(*response) bool
		if len(p.ups) == 1 {
			// the upstream's answer, as it sent it, unless tools must be added
			relay = func(r *response) bool {
				var res struct {
					Capabilities map[string]json.RawMessage `json:"capabilities"`
				}
				if r.Error == nil && (json.Unmarshal(r.Result, &res) != nil || res.Capabilities == nil) {
					return false
				}
				if _, ok := res.Capabilities["tools"]; r.Error == nil && !ok && len(defined) > 0 {
					return false
				}
				up.setInit(r.Result)
				return p.relayTo(id)(r)
			}
		}
		raw, err := up.callRelay(ctx, "initialize", params, relay)
		if err != nil {
			return nil, err
		}
		up.setInit(raw)
		if err := decode(raw, &results[k]); err != nil || results[k] == nil {
			return nil, &UpstreamError{Upstream: up.name, Method: "initialize", Err: fmt.Errorf("its result is not an object: %s", clip(raw))}
		}
	}
	var res map[string]any
	if len(p.ups) == 1 {
		res = results[0]
	} else {
		res = mergeInit(p.ups, results)
	}
	caps, _ := res["capabilities"].(map[string]any)
	if caps == nil {
		caps = map[string]any{}
		res["capabilities"] = caps
	}
	if _, ok := caps["tools"]; !ok && len(defined) > 0 {
		caps["tools"] = map[string]any{}
	}
	return json.Marshal(res)
}

// mergeInit merges the initialize results of several upstreams: the union
// of their capabilities, the oldest protocol version, their instructions.
func mergeInit(ups []*upstream, results []map[string]any) map[string]any {
	caps := map[string]any{}
	var version string
	var instr []string
	for k, r := range results {
		if c, ok := r["capabilities"].(map[string]any); ok {
			mergeMaps(caps, c)
		}
		if v, ok := r["protocolVersion"].(string); ok && (version == "" || v < version) {
			version = v
		}
		if s, ok := r["instructions"].(string); ok && s != "" {
			instr = append(instr, ups[k].name+": "+s)
		}
	}
	res := map[string]any{
		"protocolVersion": version,
		"capabilities":    caps,
		"serverInfo":      map[string]any{"name": "attune-mcp", "version": engine.Version},
	}
	if len(instr) > 0 {
		res["instructions"] = strings.Join(instr, "\n\n")
	}
	return res
}

// mergeMaps adds src into dst: maps merge, true wins over false.
func mergeMaps(dst, src map[string]any) {
	for k, v := range src {
		switch sv := v.(type) {
		case map[string]any:
			dv, ok := dst[k].(map[string]any)
			if !ok {
				dv = map[string]any{}
				dst[k] = dv
			}
			mergeMaps(dv, sv)
		case bool:
			if b, _ := dst[k].(bool); !b {
				dst[k] = sv
			}
		default:
			if _, ok := dst[k]; !ok {
				dst[k] = v
			}
		}
	}
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// capable reports whether an upstream declared a capability.
func capable(up *upstream, name string) bool {
	var r struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(up.initResult(), &r) != nil {
		return false
	}
	_, ok := r.Capabilities[name]
	return ok
}

// forward relays any other request to one of several upstreams: lists are
// merged and a request naming a resource, prompt or
// template goes to the upstream that listed it.
func (p *proxy) forward(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	var ps struct {
		URI  string `json:"uri"`
		Name string `json:"name"`
		Ref  struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
	}
	_ = json.Unmarshal(params, &ps)
	switch method {
	case "resources/list":
		return p.mergeList(ctx, method, "resources", "resources", "uri", "uri:")
	case "resources/templates/list":
		return p.mergeList(ctx, method, "resources", "resourceTemplates", "uriTemplate", "template:")
	case "prompts/list":
		return p.mergeList(ctx, method, "prompts", "prompts", "name", "prompt:")
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		return p.route(ctx, method, params, "uri:"+ps.URI, "resources")
	case "prompts/get":
		return p.route(ctx, method, params, "prompt:"+ps.Name, "prompts")
	case "completion/complete":
		if ps.Ref.Type == "ref/prompt" {
			return p.route(ctx, method, params, "prompt:"+ps.Ref.Name, "completions")
		}
		return p.route(ctx, method, params, "template:"+ps.Ref.URI, "completions")
	case "logging/setLevel":
		for _, up := range p.ups {
			if capable(up, "logging") {
				if _, err := up.call(ctx, method, params); err != nil {
					return nil, err
				}
			}
		}
		return json.RawMessage(`{}`), nil
	}
	return p.ups[0].call(ctx, method, params)
}

func (p *proxy) route(ctx context.Context, method string, params json.RawMessage, owner, capability string) (json.RawMessage, error) {
	up := p.ownerOf(ctx, owner)
	if up == nil {
		for _, u := range p.ups {
			if capable(u, capability) {
				up = u
				break
			}
		}
	}
	if up == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no upstream offers " + capability}
	}
	return up.call(ctx, method, params)
}

// ownerOf is the upstream that listed a resource, prompt or template
// ("uri:U", "prompt:P", "template:T"). When none has yet (the client did
// not list, or the lists changed), the lists are read again; a resource
// no upstream lists belongs to the upstream whose template's fixed prefix
// is the longest one the URI starts with. nil: no upstream lists it.
func (p *proxy) ownerOf(ctx context.Context, owner string) *upstream {
	p.mu.Lock()
	up := p.owners[owner]
	p.mu.Unlock()
	if up != nil {
		return up
	}
	kind, key, _ := strings.Cut(owner, ":")
	switch kind {
	case "prompt":
		_, _ = p.mergeList(ctx, "prompts/list", "prompts", "prompts", "name", "prompt:")
	case "template":
		_, _ = p.mergeList(ctx, "resources/templates/list", "resources", "resourceTemplates", "uriTemplate", "template:")
	case "uri":
		_, _ = p.mergeList(ctx, "resources/list", "resources", "resources", "uri", "uri:")
		_, _ = p.mergeList(ctx, "resources/templates/list", "resources", "resourceTemplates", "uriTemplate", "template:")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if up = p.owners[owner]; up != nil || kind != "uri" {
		return up
	}
	best, rank := -1, map[*upstream]int{}
	for k, u := range p.ups {
		rank[u] = k
	}
	for k, u := range p.owners {
		t, ok := strings.CutPrefix(k, "template:")
		if !ok {
			continue
		}
		fixed, _, _ := strings.Cut(t, "{")
		if fixed == "" || !strings.HasPrefix(key, fixed) {
			continue
		}
		if len(fixed) > best || len(fixed) == best && rank[u] < rank[up] {
			up, best = u, len(fixed)
		}
	}
	return up
}

// mergeList lists every page of every upstream that has the capability,
// remembers which upstream listed each item, and answers in one page.
func (p *proxy) mergeList(ctx context.Context, method, capability, field, key, prefix string) (json.RawMessage, error) {
	all := []json.RawMessage{}
	for _, up := range p.ups {
		if !capable(up, capability) {
			continue
		}
		items, err := listAll(ctx, up, method, field)
		if err != nil {
			return nil, err
		}
		p.mu.Lock()
		for _, it := range items {
			var m map[string]any
			if json.Unmarshal(it, &m) == nil {
				if k, ok := m[key].(string); ok {
					if _, taken := p.owners[prefix+k]; !taken {
						p.owners[prefix+k] = up
					}
				}
			}
		}
		p.mu.Unlock()
		all = append(all, items...)
	}
	return json.Marshal(map[string]any{field: all})
}

// listAll follows nextCursor through every page of a list method.
func listAll(ctx context.Context, up *upstream, method, field string) ([]json.RawMessage, error) {
	var out []json.RawMessage
	var cursor string
	for page := 0; page < 1000; page++ {
		params := json.RawMessage(`{}`)
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		raw, err := up.call(ctx, method, params)
		if err != nil {
			return nil, err
		}
		var r map[string]json.RawMessage
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, &UpstreamError{Upstream: up.name, Method: method, Err: fmt.Errorf("its result is not an object: %s", clip(raw))}
		}
		var items []json.RawMessage
		if err := json.Unmarshal(r[field], &items); err != nil && r[field] != nil {
			return nil, &UpstreamError{Upstream: up.name, Method: method, Err: fmt.Errorf("%s is not a list", field)}
		}
		out = append(out, items...)
		cursor = ""
		_ = json.Unmarshal(r["nextCursor"], &cursor)
		if cursor == "" {
			return out, nil
		}
	}
	return nil, &UpstreamError{Upstream: up.name, Method: method, Err: errors.New("more than 1000 pages")}
}
