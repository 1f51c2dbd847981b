package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/store"
)

// Every path the project prints counts list items from 1: the first
// program of a bot is behaviors[1] in a config error, as the first item of
// a list is steps[1] in a schema error (config/doc.go, docs/storage.md).
func TestListItemsCountFromOneInEveryPath(t *testing.T) {
	_, err := config.Parse("attune.toml", []byte("[bots.main]\nbehaviors = [\"nowhere\"]\nceiling = [\"read\", 3]\n"))
	if err == nil || !strings.Contains(err.Error(), "bots.main.ceiling[2]: want a string") {
		t.Fatalf("config: the second effect is ceiling[2]; got %v", err)
	}
	cfg, err := config.Parse("attune.toml", []byte("[bots.main]\nbehaviors = [\"nowhere\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(context.Background(), Options{Config: cfg, Store: store.NewMemory()})
	if err == nil || !strings.Contains(err.Error(), "bots.main.behaviors[1]: no pack holds program \"nowhere\"") {
		t.Fatalf("config: the first program is behaviors[1]; got %v", err)
	}
	e := testEngine(t, "[bots.main]\nbehaviors = [\"p\"]\n", map[string]string{"p.lua": `
define.reducer("plan", function(s) return s end)
define.method("plan", "set", function(ctx, s, input) return true end, {input = {steps = {"string"}}})`})
	i := start(t, e, "a", "main")
	out := hostCall(i, "plan", "set", map[string]any{"steps": []any{1.0, "b"}})
	if out.Status != StatusRefused || out.Reason != "input.steps[1]: want string, got number" {
		t.Fatalf("schema: the first step is steps[1]; got %+v", out)
	}
}
