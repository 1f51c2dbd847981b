package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// Hostile input gives errors, never panics, and within bounded time and
// memory.
func TestHostileInput(t *testing.T) {
	const n = 200_000
	for _, c := range []struct {
		name string
		src  []byte
		want string // the error contains this
	}{
		{"huge file", bytes.Repeat([]byte("# padding\n"), MaxSize/10+1),
			"attune.toml: the file is 1048580 bytes; the limit is 1048576"},
		{"deep lists", []byte("x = " + strings.Repeat("[", n) + strings.Repeat("]", n)),
			"attune.toml:1:69: brackets nested deeper than 64"},
		{"deep inline tables", []byte("x = " + strings.Repeat("{a=", n) + "1" + strings.Repeat("}", n)),
			"brackets nested deeper than 64"},
		{"deep program config", []byte("[bots.b]\nbehaviors = ['p']\n[bots.b.config.p]\nx = " + strings.Repeat("{a=", n) + "1" + strings.Repeat("}", n)),
			"attune.toml:4:"},
		{"long dotted key", []byte(strings.Repeat("a.", n) + "a = 1"),
			"dotted keys nested deeper than 64"},
		{"long table header", []byte("[" + strings.Repeat("a.", n) + "a]"),
			"dotted keys nested deeper than 64"},
		{"invalid UTF-8 in a key", []byte("[bots.\xc3\x28]\n"), "attune.toml:1:7: invalid UTF-8"},
		{"invalid UTF-8 in a string", []byte("[bots.b]\nbehaviors = ['\xff']\n"), "attune.toml:2:15: invalid UTF-8"},
		{"UTF-16", []byte("\xff\xfe[\x00e\x00]\x00"), "attune.toml:1:1: invalid UTF-8"},
		{"binary", []byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0}, "attune.toml:1:"},
		{"long key", []byte(strings.Repeat("k", 500_000) + " = 1\n"), "unknown key"},
		{"long string in a message", []byte("[bots.b]\nbehaviors = ['" + strings.Repeat("a/", 400_000) + "']\n"),
			`got "a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/"...`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse("attune.toml", c.src)
			if err == nil || cfg != nil {
				t.Fatalf("Parse = %v, %v; want an error", cfg, err)
			}
			if msg := err.Error(); !strings.Contains(msg, c.want) || len(msg) > 2000 {
				t.Errorf("err = %.300q; want it to contain %q (and be short)", msg, c.want)
			}
		})
	}
}

func TestLoadHugeAndOddFiles(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.toml")
	if err := os.WriteFile(huge, bytes.Repeat([]byte("#\n"), 4*MaxSize), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(huge); err == nil || !strings.Contains(err.Error(), "the limit is 1048576") {
		t.Errorf("Load(huge) = %v", err)
	}
	if _, err := Load(dir); err == nil || !strings.HasPrefix(err.Error(), dir+": cannot read: ") {
		t.Errorf("Load(dir) = %v", err)
	}
	bom := filepath.Join(dir, "bom.toml")
	if err := os.WriteFile(bom, []byte("\xef\xbb\xbf[bots.main]\nbehaviors = 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bom); err == nil || err.Error() != bom+":2: bots.main.behaviors: want a list of strings, got integer 5" {
		t.Errorf("Load(bom) = %v", err)
	}
	if _, err := Parse("bom.toml", []byte("\xef\xbb\xbf[engine\n")); err == nil || !strings.HasPrefix(err.Error(), "bom.toml:1:8: ") {
		t.Errorf("syntax error after a BOM = %v", err)
	}
}

// A large file with many keys loads; positions past the look-up budget are
// unknown rather than slow.
func TestManyBots(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < MaxSize-200; i++ {
		fmt.Fprintf(&b, "[bots.b%d]\nbehaviors = [\"p\"]\n[bots.b%d.config.p]\nk = %d\n", i, i, i)
	}
	cfg, err := Parse("attune.toml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.BotOrder) != len(cfg.Bots) || cfg.BotOrder[0] != "b0" || cfg.BotOrder[1] != "b1" {
		t.Errorf("BotOrder starts %q", cfg.BotOrder[:2])
	}
	if err := cfg.Validate(func(string) bool { return true }); err != nil {
		t.Error(err)
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"full.toml", "scenario.toml", "bad-scenario.toml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"[engine]\nstore = 'memory:'\ncallback_budget = '2s'\n",
		"bots = { main = { behaviors = ['a'], config = { a = { x = [1, {y = 1979-05-27}] } } } }\n",
		"[bots.main]\nbehaviors = ['a', 'a']\nretry_budget = -1\n[bots.main.config.b]\n",
		"[[bots.main.config.a.list]]\nx = nan\n",
		"a = [1,\n",
		"x = \"\\u00e9\"\n'''\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("f.toml", data)
		checkResult(t, cfg, err)
		if err != nil {
			return
		}
		_ = cfg.Validate(func(name string) bool { return len(name)%2 == 0 })
		_ = cfg.Errorf("bots.x.grants[1]", "m").Error()

		// The same source as a scenario's [config] table.
		var s struct{ Config toml.Primitive }
		md, err := toml.Decode("[config]\n"+strings.TrimPrefix(string(data), "\xef\xbb\xbf"), &s)
		if err == nil {
			cfg, err := Decode("s.toml", md, s.Config, "config", ".")
			checkResult(t, cfg, err)
		}
	})
}

func checkResult(t *testing.T, cfg *Config, err error) {
	t.Helper()
	if err != nil {
		if cfg != nil {
			t.Fatal("a Config and an error")
		}
		errs := Errors(err)
		if len(errs) == 0 {
			t.Fatalf("error %T is not an *Error or a *List: %v", err, err)
		}
		for _, e := range errs {
			if e.Msg == "" || e.Line < 0 || e.Col < 0 {
				t.Fatalf("bad error %#v", e)
			}
		}
		return
	}
	if cfg == nil || len(cfg.BotOrder) != len(cfg.Bots) {
		t.Fatalf("cfg = %+v", cfg)
	}
	for _, name := range cfg.BotOrder {
		b := cfg.Bots[name]
		if b == nil || b.Name != name || b.RetryBudget < 0 {
			t.Fatalf("bot %q = %+v", name, b)
		}
		for prog := range b.Config {
			if !slices.Contains(b.Behaviors, prog) {
				t.Fatalf("bot %q configures %q, which it does not select", name, prog)
			}
		}
	}
	if cfg.Engine.CallbackBudget <= 0 {
		t.Fatalf("CallbackBudget = %v", cfg.Engine.CallbackBudget)
	}
	if _, _, err := ParseStore(cfg.Engine.Store, ""); err != nil {
		t.Fatalf("Store %q: %v", cfg.Engine.Store, err)
	}
}
