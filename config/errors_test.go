package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// R8.2: config validation is structural: unknown keys, wrong types and bad
// values are errors with the file, the line and the key path; every problem
// is reported, not only the first.
func TestStructuralErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		src  string
		want []string
	}{
		// Unknown keys, with the closest known key when one is close.
		{"unknown top key", "engin.store = 'memory:'\n",
			[]string{`attune.toml:1: engin: unknown key; did you mean "engine"?`}},
		{"unknown engine key", "[engine]\nstore = 'memory:'\nstorage = 'x'\n",
			[]string{`attune.toml:3: engine.storage: unknown key`}},
		{"unknown floor key", "[floor]\nrefuse = ['deny']\n",
			[]string{`attune.toml:2: floor.refuse: unknown key; did you mean "refuse_marks"?`}},
		{"unknown bot key", "[bots.main]\nbehaviors = ['goal']\nceilng = ['read']\n",
			[]string{`attune.toml:3: bots.main.ceilng: unknown key; did you mean "ceiling"?`}},
		{"unknown key in an inline table", "bots = { main = { retry = 1 } }\n",
			[]string{`attune.toml:1: bots.main.retry: unknown key; did you mean "retry_budget"?`}},

		// Wrong types.
		{"engine not a table", "engine = 'memory:'\n",
			[]string{`attune.toml:1: engine: want a table, got string`}},
		{"store not a string", "[engine]\nstore = 5\n",
			[]string{`attune.toml:2: engine.store: want a string, got integer 5`}},
		{"packs not a list", "[engine]\npacks = 'packs'\n",
			[]string{`attune.toml:2: engine.packs: want a list of strings, got string`}},
		{"callback_budget an integer", "\n\n\n[engine]\ncallback_budget = 5\n",
			[]string{`attune.toml:5: engine.callback_budget: want a duration like "1s", got integer 5`}},
		{"host_timeout zero", "[engine]\nhost_timeout = \"0s\"\n",
			[]string{`attune.toml:2: engine.host_timeout: want a duration > 0, got "0s"`}},
		{"host_timeout over a day", "[engine]\nhost_timeout = \"25h\"\n",
			[]string{`attune.toml:2: engine.host_timeout: want a duration of at most 24h0m0s, got "25h"`}},
		{"mcp call_timeout negative", "[harness.mcp]\ncall_timeout = \"-1s\"\n",
			[]string{`attune.toml:2: harness.mcp.call_timeout: want a duration > 0, got "-1s"`}},
		{"host_timeout an integer", "[engine]\nhost_timeout = 30\n",
			[]string{`attune.toml:2: engine.host_timeout: want a duration like "30s", got integer 30`}},
		{"callback_budget a float", "[engine]\ncallback_budget = 1.5\n",
			[]string{`attune.toml:2: engine.callback_budget: want a duration like "1s", got float 1.5`}},
		{"refuse_marks element", "[floor]\nrefuse_marks = ['deny', 1]\n",
			[]string{`attune.toml:2: floor.refuse_marks[2]: want a string, got integer 1`}},
		{"bots a list", "bots = ['main']\n",
			[]string{`attune.toml:1: bots: want a table, got list`}},
		{"bots an array of tables", "[[bots]]\nname = 'main'\n",
			[]string{`attune.toml:1: bots: want a table, got list of tables`}},
		{"bot not a table", "bots.main = 'goal'\n",
			[]string{`attune.toml:1: bots.main: want a table, got string`}},
		{"behaviors a string", "[bots.main]\nbehaviors = 'goal'\n",
			[]string{`attune.toml:2: bots.main.behaviors: want a list of strings, got string`}},
		{"behaviors element", "[bots.main]\nbehaviors = [\n  'goal',\n  true,\n]\n",
			[]string{`attune.toml:2: bots.main.behaviors[2]: want a string, got boolean true`}},
		{"retry_budget a float", "[bots.main]\nretry_budget = 2.5\n",
			[]string{`attune.toml:2: bots.main.retry_budget: want an integer >= 0, got float 2.5`}},
		{"retry_budget a string", "[bots.main]\nretry_budget = '2'\n",
			[]string{`attune.toml:2: bots.main.retry_budget: want an integer >= 0, got string`}},
		{"config not a table", "[bots.main]\nbehaviors = ['goal']\nconfig = []\n",
			[]string{`attune.toml:3: bots.main.config: want a table, got list`}},
		{"program config not a table", "[bots.main]\nbehaviors = ['goal']\n[bots.main.config]\ngoal = 3\n",
			[]string{`attune.toml:4: bots.main.config.goal: want a table, got integer 3`}},

		// Bad values.
		{"unknown store", "[engine]\nstore = 'mysql://x'\n",
			[]string{`attune.toml:2: engine.store: unknown store kind "mysql:"; want "memory:", "sqlite:PATH", a path to a .db file, or "postgres://..."`}},
		{"empty project", "[engine]\nproject = ''\n",
			[]string{`attune.toml:2: engine.project: want a non-empty string`}},
		// Numeric keys are bounded.
		{"retry_budget huge", "[bots.main]\nretry_budget = 9223372036854775807\n",
			[]string{`attune.toml:2: bots.main.retry_budget: want an integer of at most 100, got 9223372036854775807`}},
		{"callback_budget huge", "[engine]\ncallback_budget = '2562047h'\n",
			[]string{`attune.toml:2: engine.callback_budget: want a duration of at most 10m0s, got "2562047h"`}},
		{"max_note_bytes zero", "[engine]\nmax_note_bytes = 0\n",
			[]string{`attune.toml:2: engine.max_note_bytes: want a size like "64KiB" or a number of bytes, from 1 to 16MiB, got 0 bytes`}},
		{"max_boundary_note_bytes huge", "[engine]\nmax_boundary_note_bytes = '1GiB'\n",
			[]string{`attune.toml:2: engine.max_boundary_note_bytes: want a size like "64KiB" or a number of bytes, from 1 to 16MiB, got "1GiB"`}},
		{"memory_limit tiny", "[engine]\nmemory_limit = 1024\n",
			[]string{`attune.toml:2: engine.memory_limit: want at least 64MiB (or 0 to turn the limit off), got 1024 bytes`}},
		{"memory_limit huge", "[engine]\nmemory_limit = '9TiB'\n",
			[]string{`attune.toml:2: engine.memory_limit: want at most 1TiB, got "9TiB"`}},
		{"memory_limit no unit", "[engine]\nmemory_limit = '512'\n",
			[]string{`attune.toml:2: engine.memory_limit: want a size like "512MiB" or "2GiB" (or 0 to turn the limit off), got "512"`}},
		{"bad duration", "[engine]\ncallback_budget = 'fast'\n",
			[]string{`attune.toml:2: engine.callback_budget: want a duration like "1s", got "fast"`}},
		{"negative duration", "[engine]\ncallback_budget = '-1s'\n",
			[]string{`attune.toml:2: engine.callback_budget: want a duration > 0, got "-1s"`}},
		{"zero duration", "[engine]\ncallback_budget = '0s'\n",
			[]string{`attune.toml:2: engine.callback_budget: want a duration > 0, got "0s"`}},
		{"negative retry_budget", "[bots.main]\nretry_budget = -1\n",
			[]string{`attune.toml:2: bots.main.retry_budget: want an integer >= 0, got -1`}},
		{"empty bot name", "[bots.\"\"]\n",
			[]string{`attune.toml:1: bots."": want a bot name, got an empty key`}},
		{"program names", "[bots.main]\nbehaviors = ['goal.scm', 'a/b', '.hidden', '']\n", []string{
			`attune.toml:2: bots.main.behaviors[1]: want a program name (the file stem), got "goal.scm"; did you mean "goal"?`,
			`attune.toml:2: bots.main.behaviors[2]: want a program name (a file stem of letters, digits, '_', '-', '.'), got "a/b"`,
			`attune.toml:2: bots.main.behaviors[3]: want a program name (a file stem of letters, digits, '_', '-', '.'), got ".hidden"`,
			`attune.toml:2: bots.main.behaviors[4]: want a program name, got an empty string`,
		}},
		{"empty grant", "[bots.main]\ngrants = ['tasks.create', '']\n",
			[]string{`attune.toml:2: bots.main.grants[2]: want a non-empty string`}},
		{"config of an unselected program", "[bots.main]\nbehaviors = ['goal']\n[bots.main.config.gaol]\nloops = 2\n",
			[]string{`attune.toml:3: bots.main.config.gaol: configures program "gaol", which this bot does not select; did you mean "goal"?`}},
		{"numbers a program cannot hold", "[bots.main]\nbehaviors = ['goal']\n[bots.main.config.goal]\nx = nan\ny = -inf\nz = 9007199254740993\nw = [1, [2, -9007199254740993]]\n", []string{
			`attune.toml:4: bots.main.config.goal.x: want a finite number, got float NaN`,
			`attune.toml:5: bots.main.config.goal.y: want a finite number, got float -Inf`,
			`attune.toml:6: bots.main.config.goal.z: integer 9007199254740993 is too large to be held exactly as a number (the limit is 2^53)`,
			`attune.toml:7: bots.main.config.goal.w[2][2]: integer -9007199254740993 is too large to be held exactly as a number (the limit is 2^53)`,
		}},
		{"program config nested too deep",
			"[bots.main]\nbehaviors = ['p']\n[bots.main.config.p" + strings.Repeat(".a", 30) + "]\nx = " +
				strings.Repeat("{a=", 40) + "1" + strings.Repeat("}", 40) + "\n",
			[]string{`attune.toml:4: bots.main.config.p` + strings.Repeat(".a", 30) + ".x" + strings.Repeat(".a", 30) +
				`: nested deeper than 64 levels`}},

		// Duplicates.
		{"duplicate program", "[bots.main]\nbehaviors = ['goal', 'tasks', 'goal']\n",
			[]string{`attune.toml:2: bots.main.behaviors[3]: duplicate program "goal" (also at [1])`}},
		{"duplicate effect", "[bots.main]\nceiling = ['read', 'read']\n",
			[]string{`attune.toml:2: bots.main.ceiling[2]: duplicate effect "read" (also at [1])`}},
		{"duplicate grant", "[bots.main]\ngrants = ['a.b', 'a.b']\n",
			[]string{`attune.toml:2: bots.main.grants[2]: duplicate grant "a.b" (also at [1])`}},
		{"duplicate pack folder, as resolved", "[engine]\npacks = ['packs', './packs/']\n",
			[]string{`attune.toml:2: engine.packs[2]: duplicate pack folder "./packs/" (also at [1])`}},
		{"duplicate key", "a = 1\na = 2\n",
			[]string{`attune.toml:2:1: Key 'a' has already been defined.`}},
		{"duplicate bot", "[bots.main]\n[bots.main]\n",
			[]string{`attune.toml:2:2: Key 'bots.main' has already been defined.`}},

		// Syntax and source.
		{"syntax error", "[engine]\nstore = \n",
			[]string{`attune.toml:2:9: expected value but found '\n' instead`}},
		{"unterminated list", "a = [1,\n 2",
			[]string{`attune.toml:2:2: expected a comma (',') or array terminator (']'), but got end of file`}},
		{"non-UTF-8", "x = \"ok\"\n# caf\xe9\n",
			[]string{`attune.toml:2:6: invalid UTF-8 (byte 0xe9); TOML files must be UTF-8`}},
		{"NUL bytes", "x = \"\x00\"\n",
			[]string{`attune.toml:1:6: files cannot contain NULL bytes; probably using UTF-16; TOML files must be UTF-8`}},
		{"deep brackets", "x = " + strings.Repeat("[", 65) + strings.Repeat("]", 65) + "\n",
			[]string{`attune.toml:1:69: brackets nested deeper than 64`}},
		{"long dotted key", strings.Repeat("a.", 64) + "a = 1\n",
			[]string{`attune.toml:1:128: dotted keys nested deeper than 64`}},

		// Every problem at once, in the order of the file.
		{"all problems", `[engine]
store = "sqlite:.attune/state.db"
packs = ["packs/mine", 3]
callback_budget = 5
colour = "blue"

[bots.main]
behaviors = ["tasks", "goal", "tasks"]
ceilng = ["read"]
retry_budget = -2

[bots.other]
behaviors = "tasks"
`, []string{
			`attune.toml:3: engine.packs[2]: want a string, got integer 3`,
			`attune.toml:4: engine.callback_budget: want a duration like "1s", got integer 5`,
			`attune.toml:5: engine.colour: unknown key`,
			`attune.toml:8: bots.main.behaviors[3]: duplicate program "tasks" (also at [1])`,
			`attune.toml:9: bots.main.ceilng: unknown key; did you mean "ceiling"?`,
			`attune.toml:10: bots.main.retry_budget: want an integer >= 0, got -2`,
			`attune.toml:13: bots.other.behaviors: want a list of strings, got string`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse("attune.toml", []byte(c.src))
			if cfg != nil {
				t.Errorf("Parse returned a Config with errors")
			}
			checkErrors(t, err, c.want)
		})
	}
}

// checkErrors checks that err holds exactly the problems want, and that it
// is an *Error for one problem and a *List for several.
func checkErrors(t *testing.T, err error, want []string) {
	t.Helper()
	var got []string
	for _, e := range Errors(err) {
		got = append(got, e.Error())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if err != nil && err.Error() != strings.Join(want, "\n") {
		t.Errorf("Error() = %q", err.Error())
	}
	var l *List
	var e *Error
	switch {
	case len(want) == 1 && (errors.As(err, &l) || !errors.As(err, &e)):
		t.Errorf("one problem: got %T; want *Error", err)
	case len(want) > 1 && !errors.As(err, &l):
		t.Errorf("several problems: got %T; want *List", err)
	}
}

func TestSyntaxErrorUnwrapsToParseError(t *testing.T) {
	_, err := Parse("attune.toml", []byte("[engine\n"))
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %#v; want it to wrap a toml.ParseError", err)
	}
}

func TestTooManyProblems(t *testing.T) {
	var b strings.Builder
	for i := range maxErrors + 20 {
		b.WriteString("[bots.b" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "]\n")
		b.WriteString("bogus" + strings.Repeat("_", i) + " = 1\n")
	}
	_, err := Parse("attune.toml", []byte(b.String()))
	errs := Errors(err)
	if len(errs) != maxErrors+1 {
		t.Fatalf("%d problems; want %d", len(errs), maxErrors+1)
	}
	if last := errs[len(errs)-1]; last.Error() != "attune.toml: too many problems; stopped after 100" {
		t.Errorf("last = %q", last)
	}
}

// R8.2: a program that no pack holds is an error naming the key path and
// the line; so is a configuration table for a program the bot does not
// select.
func TestValidate(t *testing.T) {
	src := `[bots.main]
behaviors = [
  "tasks",
  "tsks",
]
[bots.scout]
behaviors = ["offload"]
`
	cfg, err := Parse("attune.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	packs := map[string]bool{"tasks": true, "offload": true}
	checkErrors(t, cfg.Validate(func(name string) bool { return packs[name] }),
		[]string{`attune.toml:2: bots.main.behaviors[2]: no pack holds program "tsks"`})
	if err := cfg.Validate(nil); err != nil {
		t.Errorf("Validate(nil) = %v", err)
	}
	checkErrors(t, cfg.Validate(func(string) bool { return false }), []string{
		`attune.toml:2: bots.main.behaviors[1]: no pack holds program "tasks"`,
		`attune.toml:2: bots.main.behaviors[2]: no pack holds program "tsks"`,
		`attune.toml:7: bots.scout.behaviors[1]: no pack holds program "offload"`,
	})

	// A Config built by hand gets the same check Parse makes for tables of
	// programs the bot does not select; its lines are unknown.
	hand := Default(".")
	hand.Bots["b"] = &Bot{Name: "b", Behaviors: []string{"goal"}, Config: map[string]map[string]any{"gaol": {}}}
	hand.BotOrder = []string{"b"}
	checkErrors(t, hand.Validate(nil),
		[]string{`bots.b.config.gaol: configures program "gaol", which this bot does not select; did you mean "goal"?`})
}

// [engine] host_timeout bounds each host callback; 30s when not given.
func TestHostTimeoutKey(t *testing.T) {
	cfg, err := Parse("attune.toml", []byte("[engine]\nhost_timeout = \"250ms\"\n"))
	if err != nil || cfg.Engine.HostTimeout != 250*time.Millisecond {
		t.Fatalf("%v %v", cfg, err)
	}
	cfg, err = Parse("attune.toml", []byte("[bots.main]\nbehaviors = []\n"))
	if err != nil || cfg.Engine.HostTimeout != DefaultHostTimeout || DefaultHostTimeout != 30*time.Second {
		t.Fatalf("default: %v %v", cfg.Engine, err)
	}
}
