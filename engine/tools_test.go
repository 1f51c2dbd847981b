package engine

import (
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
