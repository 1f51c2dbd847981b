package engine

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// repo is a host's own Go value behaviors reach through a host library.
type repo struct {
	calls atomic.Int32
	name  string
}

type logOpts struct {
	Max int
}

func (r *repo) Branch() string { r.calls.Add(1); return r.name }

func (r *repo) Log(o logOpts) ([]map[string]any, error) {
	r.calls.Add(1)
	if o.Max < 0 {
		return nil, errors.New("max must be >= 0")
	}
	out := []map[string]any{}
	for k := 0; k < o.Max; k++ {
		out = append(out, map[string]any{"n": k + 1})
	}
	return out, nil
}

// A host library (gopher-luar) exposes a Go struct's methods under a
// namespace to a Lua and a .scm behavior, in the callback ambient only; its
// answers are journaled, and a replay answers them without the host (R3.10).
func TestHostLibrary(t *testing.T) {
	ctx := context.Background()
	r := &repo{name: "main"}
	e := testEngine(t, "[bots.main]\nbehaviors = [\"l\", \"s\"]\nceiling = []\n", map[string]string{
		"l.lua": `
hook.round("end", function(b)
  local log = repo.log({Max = 2})
  notify("lua on " .. repo.branch() .. " with " .. #log .. " commits, last " .. log[2].n)
  local ok, err = pcall(repo.log, {Max = -1})
  notify("error: " .. tostring(err))
end)`,
		"s.scm": `(hook/round "end" (lambda (b) (notify (string-append "scm on " (repo/branch)))))`,
	}, func(o *Options) { o.Libraries = []HostLibrary{{Name: "repo", Value: r}} })
	i := start(t, e, "a", "main")
	i.BeginTurn(ctx, TurnInput{})
	i.BeginRound(ctx)
	res, err := i.EndRound(ctx, RoundEnd{})
	if err != nil || res.Status != StatusOK || len(res.Notes) != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	if res.Notes[0].Text != "lua on main with 2 commits, last 2" || !strings.Contains(res.Notes[1].Text, "repo.log: max must be >= 0") || res.Notes[2].Text != "scm on main" {
		t.Fatalf("notes: %+v", res.Notes)
	}
	i.EndTurn(ctx)
	before := r.calls.Load()
	r.name = "changed" // the host's answer now would differ: the replay must not ask
	rp, err := i.Replay(ctx)
	if err != nil || len(rp.Diverged) != 0 || r.calls.Load() != before {
		t.Fatalf("replay: %+v %v (host calls %d -> %d)", rp, err, before, r.calls.Load())
	}
	if len(rp.Notes) != 3 || rp.Notes[0].Text != "lua on main with 2 commits, last 2" || rp.Notes[2].Text != "scm on main" {
		t.Fatalf("replayed notes: %+v", rp.Notes)
	}
	// callback ambient only: a program's top level cannot call the host
	e2 := testEngine(t, "[bots.main]\nbehaviors = [\"top\"]\nceiling = []\n", map[string]string{"top.lua": `local b = repo.branch()`},
		func(o *Options) { o.Libraries = []HostLibrary{{Name: "repo", Value: r}} })
	if _, err := e2.Start(ctx, StartOptions{ID: "b", Bot: "main"}); err == nil || !strings.Contains(err.Error(), "repo/branch is not available in the register ambient") {
		t.Fatalf("register ambient: %v", err)
	}
	// a library cannot take an engine namespace
	if _, err := New(ctx, Options{Config: e.cfg, Store: e.st, Libraries: []HostLibrary{{Name: "call", Value: r}}}); err == nil {
		t.Fatal("a library named call was accepted")
	}
}
