package engine

import (
	"context"
	"reflect"
	"testing"
)

// Instance.Tools lists host tools and defined tools with their effects,
// whether the ceiling allows them (R4.1), and defined tools' schemas.
func TestInstanceTools(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = ['t']\nceiling = ['read']\n", map[string]string{"t.lua": `
define.tool("notes/add", function(ctx, args) return args end,
  {effect = {"read"}, input = {text = "string", tags = {"string"}, ["at?"] = {line = "integer"}}})
define.tool("notes/wipe", function(ctx, args) return 1 end, {effect = {"write"}})
`})
	if err := e.RegisterTool(echoTool("fs/write", "write")); err != nil {
		t.Fatal(err)
	}
	if err := e.RegisterTool(echoTool("fs/read", "read")); err != nil {
		t.Fatal(err)
	}
	i := start(t, e, "a", "main")
	got, err := i.Tools()
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolInfo{
		{Path: "fs/read", Effects: []string{"read"}, Allowed: true},
		{Path: "fs/write", Effects: []string{"write"}},
		{Path: "notes/add", Effects: []string{"read"}, Defined: true, Allowed: true, Input: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"at":   map[string]any{"type": "object", "properties": map[string]any{"line": map[string]any{"type": "integer"}}, "required": []any{"line"}},
				"tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
				"text": map[string]any{"type": "string"},
			},
			"required": []any{"tags", "text"},
		}},
		{Path: "notes/wipe", Effects: []string{"write"}, Defined: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Tools:\n%#v\nwant\n%#v", got, want)
	}
}

// RoundWork: round hooks, or a note waiting to be placed.
func TestRoundWork(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, "[bots.quiet]\nbehaviors = ['n']\nceiling = ['read']\n[bots.hooked]\nbehaviors = ['h']\n", map[string]string{
		"n.lua": `define.tool("say", function(ctx, args) notify("said") return 1 end, {effect = {"read"}})`,
		"h.lua": `hook.round("end", function(b) end)`,
	})
	q := start(t, e, "q", "quiet")
	if _, err := q.BeginTurn(ctx, TurnInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.BeginRound(ctx); err != nil {
		t.Fatal(err)
	}
	if q.RoundWork() {
		t.Error("no hook and no note: RoundWork is true")
	}
	if out := q.Tool(ctx, ToolCall{Path: "say"}); out.Status != StatusOK {
		t.Fatal(out)
	}
	if !q.RoundWork() {
		t.Error("a note waits: RoundWork is false")
	}
	if h := start(t, e, "h", "hooked"); !h.RoundWork() {
		t.Error("a round hook: RoundWork is false")
	}
}
