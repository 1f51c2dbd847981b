package engine

import (
	"context"
	"strings"
	"testing"
)

// A project or global owner belongs to the program that declared it first;
// another program's reducer for it is refused at load (owner:), until the
// host hands the owner over. Session owners are not claimed.
func TestOwnersAreOwned(t *testing.T) {
	red := func(scope string) string {
		return `define.reducer("x", function(s, a) s.n = s.n + 1 return s end, {scope = "` + scope + `", init = {n = 0}})
define.method("x", "add", function(ctx, s) propose({type = "add"}) return s.n + 1 end, {kind = "command"})`
	}
	e := testEngine(t, "[bots.a]\nbehaviors = [\"a\"]\n[bots.b]\nbehaviors = [\"b\"]\n[bots.sa]\nbehaviors = [\"sa\"]\n[bots.sb]\nbehaviors = [\"sb\"]\n",
		map[string]string{"a.lua": red("project"), "b.lua": red("project"), "sa.lua": red("session"), "sb.lua": red("session")})
	ctx := context.Background()
	a := start(t, e, "a", "a")
	mustOK(t, hostCall(a, "x", "add", nil))
	_, err := e.Start(ctx, StartOptions{ID: "b", Bot: "b"})
	if CodeOf(err) != CodeOwner || !strings.Contains(err.Error(), "owner: project owner x belongs to program a (pack scratch)") ||
		!strings.Contains(err.Error(), "program b (pack scratch) may not declare a reducer for it (at b.lua:1)") {
		t.Fatalf("second program: %v", err)
	}
	start(t, e, "sa", "sa")
	start(t, e, "sb", "sb") // session owners are each instance's own
	if err := e.HandOwner(ctx, "x@project", "b", "scratch"); err != nil {
		t.Fatal(err)
	}
	b := start(t, e, "b", "b")
	if out := mustOK(t, hostCall(b, "x", "add", nil)); out.Result != 2.0 {
		t.Fatalf("the new program folds the owner's log: %+v", out)
	}
	if _, err := e.Start(ctx, StartOptions{ID: "a2", Bot: "a"}); err == nil || !strings.Contains(err.Error(), "belongs to program b") {
		t.Fatalf("after the hand-over: %v", err)
	}
	if err := e.HandOwner(ctx, "x@session", "b", "scratch"); err == nil {
		t.Fatal("a session owner was handed over")
	}
}
