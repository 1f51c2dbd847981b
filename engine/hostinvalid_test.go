package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/attune-dev/attune/store"
)

// What a host gets wrong is refused with a code it can act on (invalid),
// saying what and where, instead of an untyped error or a start that goes
// ahead on a value nothing knows.
func TestHostMistakesAreInvalid(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\n", map[string]string{"g.lua": otherGuard})
	isInvalid := func(what string, err error, words ...string) {
		t.Helper()
		var ae *Error
		if !errors.As(err, &ae) || ae.Code != CodeInvalid {
			t.Fatalf("%s: %v, want code %s", what, err, CodeInvalid)
		}
		for _, w := range words {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("%s: %q does not say %q", what, err, w)
			}
		}
	}
	isInvalid("a tool with no path", e.RegisterTool(HostTool{Core: func(context.Context, CoreCall) (any, error) { return nil, nil }}), "path")
	_, err := e.Start(ctx, StartOptions{ID: "k", Bot: "main", Kind: "weird"})
	isInvalid("an unknown kind", err, `"weird"`, KindForeground, KindOneshot)
	_, err = e.Start(ctx, StartOptions{ID: "p", Bot: "main", Parent: "nobody"})
	isInvalid("a parent that is no instance", err, "nobody")
	_, err = e.Restart(ctx, "ghost")
	isInvalid("restarting an instance never started", err, "ghost")
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("restart: %v does not wrap store.ErrNotFound", err)
	}
	// a parent that stopped but is stored is still a parent
	parent := start(t, e, "mother", "main")
	parent.Stop()
	if _, err := e.Start(ctx, StartOptions{ID: "c", Bot: "main", Parent: "mother", Kind: KindOneshot}); err != nil {
		t.Fatal(err)
	}
	i := start(t, e, "x", "main")
	if res := i.Command(ctx, "nope", ""); res.Status != StatusFailed || !strings.Contains(res.Error, "have no commands") {
		t.Fatalf("a command in packs with none: %+v", res)
	}
}
