package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/luabind"
)

// fakeHost is the host a scenario declares: its reads, its tools' cores and
// its floor. It counts what ran during the current step. Safe for
// concurrent use (hooks of different registries run on different
// goroutines).
type fakeHost struct {
	mu         sync.Mutex
	reads      map[string]any
	readQueue  map[string][]Answer // answers still to give, by key
	toolQueue  map[string][]Answer // by tool path
	refuse     []string
	readCalls  int
	coreCalls  int
	floorRan   bool
	floorArgs  any
	floorMarks []string
}

func newFakeHost(sc *Scenario) *fakeHost {
	h := &fakeHost{reads: map[string]any{}, readQueue: map[string][]Answer{}, toolQueue: map[string][]Answer{}}
	for k, v := range sc.Host.Reads {
		h.reads[k] = v
	}
	for k, as := range sc.Host.ReadAnswers {
		h.readQueue[k] = as
	}
	for _, t := range sc.Host.Tools {
		if t.HasAnswers {
			h.toolQueue[t.Path] = t.Answers
		}
	}
	switch {
	case sc.Host.Floor != nil:
		h.refuse = sc.Host.Floor.RefuseMarks
	case sc.Config != nil:
		h.refuse = sc.Config.Floor.RefuseMarks
	}
	return h
}

// beginStep resets the per-step counters.
func (h *fakeHost) beginStep() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.readCalls, h.coreCalls = 0, 0
	h.floorRan, h.floorArgs, h.floorMarks = false, nil, nil
}

// observe copies the per-step counters into g.
func (h *fakeHost) observe(g *Got) {
	h.mu.Lock()
	defer h.mu.Unlock()
	g.HostReads, g.CoreCalls = h.readCalls, h.coreCalls
	g.FloorRan, g.FloorArgs, g.FloorMarks = h.floorRan, h.floorArgs, h.floorMarks
}

func (h *fakeHost) setRead(key string, v any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reads[key] = v
}

// read answers admit/read KEY: the declared delivery, nil when none. A
// read with an argument (admit/read KEY ARG) is answered by the entry
// "KEY ARG" (ARG a text as it is, other data as JSON), else by KEY.
func (h *fakeHost) read(ctx context.Context, key string) (any, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.readCalls++
	if c, ok := engine.ReadCallOf(ctx); ok && c.HasArg {
		b, _ := json.Marshal(c.Arg)
		names := []string{key + " " + string(b)}
		if s, ok := c.Arg.(string); ok {
			names = append(names, key+" "+s)
		}
		for _, n := range names {
			_, has := h.reads[n]
			if has || len(h.readQueue[n]) > 0 {
				key = n
				break
			}
		}
	}
	if q := h.readQueue[key]; len(q) > 0 {
		h.readQueue[key] = q[1:]
		if q[0].HasFail {
			return nil, errors.New(q[0].Fail)
		}
		return luabind.CopyPlain(q[0].Value), nil
	}
	return luabind.CopyPlain(h.reads[key]), nil
}

// floor refuses a call that still carries one of the refused marks.
func (h *fakeHost) floor(_ context.Context, c engine.FloorCall) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.floorRan = true
	h.floorArgs = luabind.CopyPlain(c.Args)
	h.floorMarks = append([]string{}, c.Marks...)
	for _, m := range c.Marks {
		for _, r := range h.refuse {
			if m == r {
				return "the floor refuses calls marked " + m, true
			}
		}
	}
	return "", false
}

// tool returns the host tool of one [host.tools."PATH"] table.
func (h *fakeHost) tool(t HostTool) engine.HostTool {
	effects := t.Effects
	if effects == nil {
		effects = []string{}
	}
	return engine.HostTool{Path: t.Path, Effects: effects, Core: func(_ context.Context, c engine.CoreCall) (any, error) {
		h.mu.Lock()
		h.coreCalls++
		q := h.toolQueue[t.Path]
		if len(q) > 0 {
			h.toolQueue[t.Path] = q[1:]
		}
		h.mu.Unlock()
		switch {
		case len(q) > 0 && q[0].HasFail:
			return nil, errors.New(q[0].Fail)
		case len(q) > 0:
			return luabind.CopyPlain(q[0].Value), nil
		case t.HasAnswers && !t.HasFail && !t.Echo && t.Result == nil:
			return nil, fmt.Errorf("tool %s: every answer of the scenario was given (%d); this call is one more", t.Path, len(t.Answers))
		case t.HasFail:
			return nil, errors.New(t.Fail)
		case t.Echo:
			return luabind.CopyPlain(c.Args), nil
		}
		return luabind.CopyPlain(t.Result), nil
	}}
}
