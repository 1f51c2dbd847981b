package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/BurntSushi/toml"
)

// scenario is the shape of a scenario file as far as these tests need it.
type scenario struct {
	Name   string
	Rules  []string
	Config toml.Primitive
	Host   map[string]any
}

func decodeScenario(t *testing.T, file string) (*Config, toml.MetaData, error) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSource(file, data); err != nil {
		t.Fatal(err)
	}
	var s scenario
	md, err := toml.Decode(string(data), &s)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Decode(file, md, s.Config, "config", filepath.Dir(file))
	return cfg, md, err
}

// R8.1: a scenario's [config] table holds the same schema inline.
func TestDecodeInline(t *testing.T) {
	file := filepath.Join("testdata", "scenario.toml")
	cfg, md, err := decodeScenario(t, file)
	if err != nil {
		t.Fatal(err)
	}
	dir := testdataDir(t)
	if cfg.File != file || cfg.Dir != dir {
		t.Errorf("File, Dir = %q, %q", cfg.File, cfg.Dir)
	}
	if cfg.Engine.Store != "memory:" || !reflect.DeepEqual(cfg.Engine.Packs, []string{filepath.Join(dir, "packs")}) {
		t.Errorf("Engine = %+v", cfg.Engine)
	}
	main := cfg.Bots["main"]
	if main == nil || !reflect.DeepEqual(main.Behaviors, []string{"goal"}) ||
		!reflect.DeepEqual(main.Config, map[string]map[string]any{"goal": {"loops": 2.0}}) {
		t.Errorf("bots.main = %+v", main)
	}
	// Decode marks the keys under [config] decoded: what is left is the
	// caller's.
	var left []string
	for _, k := range md.Undecoded() {
		left = append(left, k.String())
	}
	if want := []string{`host.reads."vcs/branch"`}; !reflect.DeepEqual(left, want) {
		t.Errorf("Undecoded = %q; want %q", left, want)
	}
	// Errors found after loading name the scenario file and the prefix.
	checkErrors(t, cfg.Validate(func(string) bool { return false }),
		[]string{file + `:9: config.bots.main.behaviors[1]: no pack holds program "goal"`})
	if e := cfg.Errorf("bots.main.grants", "m"); e.Error() != file+":11: config.bots.main.grants: m" {
		t.Errorf("Errorf = %q", e)
	}
}

// R8.2: problems in an inline configuration name the scenario file, the line
// and the key path with its prefix; unknown keys are found under the prefix
// only.
func TestDecodeInlineErrors(t *testing.T) {
	file := filepath.Join("testdata", "bad-scenario.toml")
	cfg, _, err := decodeScenario(t, file)
	if cfg != nil {
		t.Error("Decode returned a Config with errors")
	}
	checkErrors(t, err, []string{
		file + `:5: config.engine.callback_budget: want a duration like "1s", got integer 5`,
		file + `:8: config.bots.main.behaviors[2]: duplicate program "goal" (also at [1])`,
		file + `:9: config.bots.main.ceilng: unknown key; did you mean "ceiling"?`,
	})

	// With valid behaviors the table of an unselected program is reported.
	src := "name = 'x'\n[config.bots.main]\nbehaviors = ['goal']\n[config.bots.main.config.gaol]\nloops = 2\n"
	var s scenario
	md, err := toml.Decode(src, &s)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Decode("s.toml", md, s.Config, "config", ".")
	checkErrors(t, err, []string{
		`s.toml:4: config.bots.main.config.gaol: configures program "gaol", which this bot does not select; did you mean "goal"?`,
	})
}

func TestDecodeInlineShapes(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"no config table", "name = 'x'\n", nil},
		{"empty config table", "name = 'x'\n[config]\n", nil},
		{"config not a table", "name = 'x'\nconfig = 5\n",
			[]string{`s.toml:2: config: want a table, got integer 5`}},
		{"dotted config keys", "name = 'x'\nconfig.engine.store = 'x'\n",
			[]string{`s.toml:2: config.engine.store: unknown store "x"; want "memory:", "sqlite:PATH", a path to a .db file, or "postgres://..."`}},
		{"unknown key at the top of config", "name = 'x'\n\n[config]\nengine.store = 'memory:'\nbot.main.behaviors = []\n",
			[]string{`s.toml:5: config.bot: unknown key; did you mean "bots"?`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s scenario
			md, err := toml.Decode(c.src, &s)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := Decode("s.toml", md, s.Config, "config", "/srv/scenarios")
			checkErrors(t, err, c.want)
			if c.want == nil && (cfg == nil || cfg.Engine.Store != "sqlite:/srv/scenarios/.attune/state.db") {
				t.Errorf("cfg = %+v", cfg)
			}
			if u := md.Undecoded(); c.want == nil && len(u) != 0 {
				t.Errorf("Undecoded = %v", u)
			}
		})
	}
}

// The decoder's own depth limit guards Decode, whose source was parsed by
// the caller without CheckSource.
func TestDecodeDeepWithoutCheckSource(t *testing.T) {
	src := "[config.bots.b]\nbehaviors = ['p']\n[config.bots.b.config.p]\nx = " +
		repeat("[", 70) + repeat("]", 70) + "\n"
	var s scenario
	md, err := toml.Decode(src, &s)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Decode("s.toml", md, s.Config, "config", ".")
	errs := Errors(err)
	if len(errs) != 1 || errs[0].Line != 4 || errs[0].Msg != "nested deeper than 64 levels" {
		t.Errorf("err = %v", err)
	}
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}
