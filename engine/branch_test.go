package engine

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// R3.9: the engine's own pack ships branch: it announces a branch that
// differs from the last one it announced in this session, or any branch
// when the context is fresh; otherwise it is quiet.
func TestBranchProgram(t *testing.T) {
	ctx := context.Background()
	branch := "main"
	e := testEngine(t, "[bots.main]\nbehaviors = [\"branch\"]\n", nil, func(o *Options) {
		o.Read = func(_ context.Context, key string) (any, error) {
			if key != "vcs/branch" {
				t.Errorf("read %q", key)
			}
			return branch, nil
		}
	})
	i := start(t, e, "x", "main")
	turn := func(fresh bool) []string {
		r := ok(t)(i.BeginTurn(ctx, TurnInput{ContextFresh: fresh}))
		ok(t)(i.EndTurn(ctx))
		return texts(r.Notes)
	}
	if got := turn(false); !reflect.DeepEqual(got, []string{"ambient:Current branch: main"}) {
		t.Fatalf("first turn: %v", got)
	}
	if got := turn(false); len(got) != 0 {
		t.Fatalf("same branch, same context: %v", got)
	}
	if got := turn(true); !reflect.DeepEqual(got, []string{"ambient:Current branch: main"}) {
		t.Fatalf("fresh context: %v", got)
	}
	branch = "feature"
	if got := turn(false); !reflect.DeepEqual(got, []string{"ambient:Current branch: feature"}) {
		t.Fatalf("new branch: %v", got)
	}
	// a restart keeps what was announced in this session
	i2, err := e.Restart(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	i = i2
	if got := turn(false); len(got) != 0 {
		t.Fatalf("after restart, same branch: %v", got)
	}
}

// read/forms reads a program as forms: strings stay strings, symbols are
// names (used by the tasks behavior, R6.2).
func TestReadForms(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"a\"]\n", map[string]string{"a.lua": `
forms = read.forms([[(call/tool "tree/list" :depth 1) ; tasks/write-completion-verdict
(display "tasks/write-completion-verdict") #t 2.5]])
bad = read.forms("(unclosed")`})
	i := start(t, e, "x", "main")
	r := i.cur.Load().regs[0]
	got, err := r.st.FromLua(r.st.L.GetGlobal("forms"))
	if err != nil {
		t.Fatal(err)
	}
	want := []any{
		[]any{"call/tool", map[string]any{"string": "tree/list"}, ":depth", 1.0},
		[]any{"display", map[string]any{"string": "tasks/write-completion-verdict"}},
		true, 2.5,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
	bad, _ := r.st.FromLua(r.st.L.GetGlobal("bad"))
	if m, ok := bad.(map[string]any); !ok || !strings.Contains(m["error"].(string), "program.scm:1:1") {
		t.Fatalf("a read error gives {error = message}: %#v", bad)
	}
}
