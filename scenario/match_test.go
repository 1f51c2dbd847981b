package scenario

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		name      string
		want, got any
		ok        bool
	}{
		{"equal strings", "a", "a", true},
		{"different strings", "a", "b", false},
		{"TOML integer matches Lua number", float64(3), float64(3.0), true},
		{"int matches float", int64(3), float64(3), true},
		{"numbers by value", float64(3), float64(3.5), false},
		{"number is not a string", float64(3), "3", false},
		{"false matches false (#f)", false, false, true},
		{"false is not nil", false, nil, false},
		{"map as a subset", map[string]any{"a": 1.0}, map[string]any{"a": 1.0, "b": 2.0}, true},
		{"map key missing", map[string]any{"c": 1.0}, map[string]any{"a": 1.0}, false},
		{"map value differs", map[string]any{"a": 2.0}, map[string]any{"a": 1.0}, false},
		{"map is not a list", map[string]any{"a": 1.0}, []any{1.0}, false},
		{"list element-wise", []any{1.0, "x"}, []any{1.0, "x"}, true},
		{"list order matters", []any{"x", 1.0}, []any{1.0, "x"}, false},
		{"list length matters", []any{1.0}, []any{1.0, 2.0}, false},
		{"nested subset in a list", []any{map[string]any{"a": 1.0}}, []any{map[string]any{"a": 1.0, "b": 2.0}}, true},
		{"empty map matches empty list", map[string]any{}, []any{}, true},
		{"empty list matches empty map", []any{}, map[string]any{}, true},
		{"empty list is not nil", []any{}, nil, false},
		{"empty map matches any map", map[string]any{}, map[string]any{"a": 1.0}, true},
		{"scalar is not nil", "a", nil, false},
	}
	for _, c := range cases {
		if got := Match(c.want, c.got); got != c.ok {
			t.Errorf("%s: Match(%s, %s) = %v, want %v", c.name, Format(c.want), Format(c.got), got, c.ok)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestCheckEachKeyCanFail proves every expectation key reports a mismatch
// when the step's value differs, and none when it holds.
func TestCheckEachKeyCanFail(t *testing.T) {
	good := &Got{
		Status: "refused", Error: "disk full at fs.lua:3", Reason: "not today", RefusedBy: "guard",
		Hidden: true, Result: map[string]any{"a": 1.0}, Diagnostics: []string{"looked at it"},
		Notes: []NoteGot{{ID: "n1", Kind: "activating", Text: "goal: 2 loops left"}}, Continue: true,
		Rounds: 2, CoreCalls: 1, HostReads: 3, FloorRan: true, FloorArgs: map[string]any{"p": "a"},
		FloorMarks: []string{"b", "a"}, Revision: 4, HasRevision: true, State: []any{"x"}, HasState: true,
	}
	cases := []struct {
		key  string
		want Expect
		bad  func(g *Got)
	}{
		{"status", Expect{Status: "refused"}, func(g *Got) { g.Status = "ok" }},
		{"result", Expect{Result: map[string]any{"a": 1.0}, HasResult: true}, func(g *Got) { g.Result = map[string]any{"a": 2.0} }},
		{"error", Expect{Error: []string{"disk full", "fs.lua:3"}, HasError: true}, func(g *Got) { g.Error = "disk full" }},
		{"reason", Expect{Reason: []string{"today"}, HasReason: true}, func(g *Got) { g.Reason = "" }},
		{"refused_by", Expect{RefusedBy: ptr("guard")}, func(g *Got) { g.RefusedBy = "floor" }},
		{"hidden", Expect{Hidden: ptr(true)}, func(g *Got) { g.Hidden = false }},
		{"diagnostics", Expect{Diagnostics: []string{"looked"}, HasDiags: true}, func(g *Got) { g.Diagnostics = append(g.Diagnostics, "more") }},
		{"notes", Expect{Notes: []NoteWant{{Kind: "activating", Text: "2 loops", HasText: true}}, HasNotes: true}, func(g *Got) { g.Notes = []NoteGot{{Kind: "ambient", Text: "goal: 2 loops left"}} }},
		{"notes", Expect{Notes: []NoteWant{{Text: "2 loops", HasText: true}}, HasNotes: true}, func(g *Got) { g.Notes = nil }},
		{"continue", Expect{Continue: ptr(true)}, func(g *Got) { g.Continue = false }},
		{"rounds", Expect{Rounds: ptr(2)}, func(g *Got) { g.Rounds = 3 }},
		{"core_calls", Expect{CoreCalls: ptr(1)}, func(g *Got) { g.CoreCalls = 0 }},
		{"host_reads", Expect{HostReads: ptr(3)}, func(g *Got) { g.HostReads = 1 }},
		{"floor", Expect{Floor: &FloorWant{Ran: true, Args: map[string]any{"p": "a"}, HasArgs: true, Marks: []string{"a", "b"}, HasMarks: true}}, func(g *Got) { g.FloorMarks = []string{"a"} }},
		{"floor", Expect{Floor: &FloorWant{Ran: true, Args: map[string]any{"p": "a"}, HasArgs: true}}, func(g *Got) { g.FloorArgs = map[string]any{"p": "b"} }},
		{"floor", Expect{Floor: &FloorWant{Ran: true}}, func(g *Got) { g.FloorRan = false }},
		{"revision", Expect{Revision: ptr(int64(4))}, func(g *Got) { g.Revision = 5 }},
		{"revision", Expect{Revision: ptr(int64(4))}, func(g *Got) { g.HasRevision = false }},
		{"state", Expect{State: []any{"x"}, HasState: true}, func(g *Got) { g.State = []any{"y"} }},
		{"state", Expect{State: []any{"x"}, HasState: true}, func(g *Got) { g.HasState = false }},
	}
	for _, c := range cases {
		g := *good
		if ms := c.want.Check(&g); len(ms) != 0 {
			t.Errorf("%s: holds, but Check reported %v", c.key, ms)
		}
		c.bad(&g)
		ms := c.want.Check(&g)
		if len(ms) != 1 || ms[0].Key != c.key {
			t.Errorf("%s: does not hold, but Check reported %v", c.key, ms)
			continue
		}
		if ms[0].Want == "" || ms[0].Got == "" || !strings.HasPrefix(ms[0].String(), c.key+": want ") {
			t.Errorf("%s: report %q does not name the wanted and the got value", c.key, ms[0])
		}
	}
	// the floor never ran
	f := Expect{Floor: &FloorWant{Ran: false}}
	g := *good
	if ms := f.Check(&g); len(ms) != 1 {
		t.Errorf("floor = false when the floor ran: %v", ms)
	}
	g.FloorRan = false
	if ms := f.Check(&g); len(ms) != 0 {
		t.Errorf("floor = false when the floor never ran: %v", ms)
	}
}

func TestFormat(t *testing.T) {
	got := Format(map[string]any{"b": []any{1.0, "x", false}, "a": nil, "c": map[string]any{}})
	if want := `{a = nil, b = [1, "x", false], c = {}}`; got != want {
		t.Errorf("Format = %s, want %s", got, want)
	}
}
