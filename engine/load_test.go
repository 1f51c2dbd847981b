package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/store"
)

// R1.12, R1.11: load errors fail only the instance that loads the program,
// with the program's file and line; the engine stays usable.
func TestLoadErrors(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, `
[engine]
callback_budget = "50ms"
[bots.syntax]
behaviors = ["syntax"]
[bots.osexec]
behaviors = ["osexec"]
[bots.loop]
behaviors = ["loop"]
[bots.refuse]
behaviors = ["refuse"]
[bots.refuse.config.refuse]
level = 3
[bots.needs]
behaviors = ["needs"]
[bots.good]
behaviors = ["good"]
[bots.grant]
behaviors = ["good"]
grants = ["nothing.here"]
`, map[string]string{
		"syntax.lua": "x = 1\nif then\n",
		"osexec.lua": "\nos.execute('rm -rf /')\n",
		"loop.lua":   "while true do end",
		"refuse.lua": `validate.configuration(function(c) if c.level > 2 then return false, "level too high: " .. c.level end return true end)`,
		"needs.lua":  `require("other")`,
		"good.lua":   `hook.round("end", function(b) end)`,
	})
	for _, c := range []struct{ bot, want string }{
		{"syntax", "syntax.lua:2:"},        // a Lua syntax error: program and line
		{"osexec", "osexec.lua:2:"},        // os is absent
		{"loop", "cancelled: time budget"}, // R1.11: a top-level infinite loop
		{"refuse", "program refuse: validate/configuration refused: level too high: 3"}, // R1.8
		{"needs", "require: needs needs other, which this bot does not select"},         // R1.9
		{"grant", `grant "nothing.here" of bot grant names no method of its pin`},       // R8.2
	} {
		start := time.Now()
		_, err := e.Start(ctx, StartOptions{ID: c.bot, Bot: c.bot})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.bot, err, c.want)
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("%s: took %v", c.bot, time.Since(start))
		}
	}
	// the engine stays usable
	if _, err := e.Start(ctx, StartOptions{ID: "ok", Bot: "good"}); err != nil {
		t.Fatal(err)
	}
}

// R8.2: a bot selecting a program no pack holds: nothing starts.
func TestUnknownProgram(t *testing.T) {
	cfg, err := config.Parse("attune.toml", []byte("[bots.main]\nbehaviors = [\"nowhere\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(context.Background(), Options{Config: cfg, Store: store.NewMemory()})
	if err == nil || !strings.Contains(err.Error(), "bots.main.behaviors[1]") || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("got %v", err)
	}
}

// R1.3: a program installed in a pack but selected by no bot registers
// nothing: its top level never runs.
func TestUnselectedNeverRuns(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"good\"]\n", map[string]string{
		"good.lua":   `x = 1`,
		"poison.lua": `while true do end`,
	})
	i := start(t, e, "a", "main")
	if n := len(i.cur.Load().regs); n != 1 {
		t.Fatalf("%d registries", n)
	}
}

// R1.8: a validate/configuration handler written in the forms refuses with
// a message by returning it.
func TestValidateInForms(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"v\"]\n[bots.main.config.v]\nloops = 0\n", map[string]string{"v.scm": `
(validate/configuration
  (lambda (c)
    (if (< (get c "loops") 1) "loops must be at least 1" #t)))`})
	_, err := e.Start(context.Background(), StartOptions{ID: "a", Bot: "main"})
	if err == nil || !strings.Contains(err.Error(), "program v: validate/configuration refused: loops must be at least 1") {
		t.Fatalf("got %v", err)
	}
}
