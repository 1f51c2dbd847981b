package tomlx

import (
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// One suggestion rule for config and scenario keys: case-insensitive, an
// edit (a swap of neighbours counts one) per three letters, or a prefix.
func TestSuggest(t *testing.T) {
	botKeys := []string{"behaviors", "ceiling", "config", "grants", "retry_budget"}
	for key, want := range map[string]string{
		"ceilng":       `; did you mean "ceiling"?`,
		"Behaviors":    `; did you mean "behaviors"?`,
		"retry-budget": `; did you mean "retry_budget"?`,
		"retry":        `; did you mean "retry_budget"?`,
		"x":            "",
		"colour":       "",
	} {
		if got := Suggest(key, botKeys); got != want {
			t.Errorf("Suggest(%q) = %q; want %q", key, got, want)
		}
	}
	for key, want := range map[string]string{"pth": "path", "resutl": "result", "raeds": "reads", "tol": "tool"} {
		if got := Suggest(key, []string{"path", "result", "reads", "tool", "status"}); got != `; did you mean "`+want+`"?` {
			t.Errorf("Suggest(%q) = %q; want %q", key, got, want)
		}
	}
}

// One wording of a value's type in messages.
func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{nil, "nothing"}, {"x", "string"}, {int64(5), "integer 5"}, {1.5, "float 1.5"}, {true, "boolean true"},
		{time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), "datetime"}, {[]any{}, "list"},
		{[]map[string]any{}, "list of tables"}, {map[string]any{}, "table"},
	} {
		if got := Describe(c.v); got != c.want {
			t.Errorf("Describe(%#v) = %q; want %q", c.v, got, c.want)
		}
	}
}

// Line finds a key's line through the decoder's own positions.
func TestLine(t *testing.T) {
	var m map[string]toml.Primitive
	md, err := toml.Decode("a = 1\n\n[b]\nc = 2\n", &m)
	if err != nil {
		t.Fatal(err)
	}
	if got := Line(&md, m["a"]); got != 1 {
		t.Errorf("line of a = %d, want 1", got)
	}
	var b map[string]toml.Primitive
	if err := md.PrimitiveDecode(m["b"], &b); err != nil {
		t.Fatal(err)
	}
	if got := Line(&md, b["c"]); got != 4 {
		t.Errorf("line of b.c = %d, want 4", got)
	}
	if got := Line(&md, toml.Primitive{}); got != 0 {
		t.Errorf("line of nothing = %d, want 0", got)
	}
}

// Config and scenario errors print their position the same way.
func TestLocated(t *testing.T) {
	for _, c := range []struct {
		file      string
		line, col int
		path, msg string
		want      string
	}{
		{"a.toml", 3, 7, "bots.main", "bad", "a.toml:3:7: bots.main: bad"},
		{"a.toml", 3, 0, "bots.main", "bad", "a.toml:3: bots.main: bad"},
		{"a.toml", 0, 7, "", "bad", "a.toml: bad"},
		{"", 4, 0, "k", "bad", "line 4: k: bad"},
		{"", 0, 0, "", "bad", "bad"},
	} {
		if got := Located(c.file, c.line, c.col, c.path, c.msg); got != c.want {
			t.Errorf("Located(%q, %d, %d, %q, %q) = %q, want %q", c.file, c.line, c.col, c.path, c.msg, got, c.want)
		}
	}
}
