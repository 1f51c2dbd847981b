package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

func testdataDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// R8.1: one file holds [engine], [floor] and [bots.NAME] with behaviors,
// ceiling, grants, retry_budget and [bots.NAME.config.PROGRAM] tables.
func TestLoadFullSchema(t *testing.T) {
	dir := testdataDir(t)
	file := filepath.Join("testdata", "full.toml")
	cfg, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.File != file || cfg.Dir != dir {
		t.Errorf("File, Dir = %q, %q; want %q, %q", cfg.File, cfg.Dir, file, dir)
	}
	wantEngine := Engine{
		Store:          "sqlite:" + filepath.Join(dir, ".attune", "state.db"),
		Packs:          []string{filepath.Join(dir, "packs", "mine"), "/opt/attune/packs"},
		Project:        "acme",
		CallbackBudget: 250 * time.Millisecond,
		HostTimeout:    DefaultHostTimeout,
		MemoryLimit:    DefaultMemoryLimit,

		MaxNoteBytes:         DefaultMaxNoteBytes,
		MaxBoundaryNoteBytes: DefaultMaxBoundaryNoteBytes,
	}
	if !reflect.DeepEqual(cfg.Engine, wantEngine) {
		t.Errorf("Engine = %+v\nwant %+v", cfg.Engine, wantEngine)
	}
	if want := []string{"deny", "secret"}; !reflect.DeepEqual(cfg.Floor.RefuseMarks, want) {
		t.Errorf("RefuseMarks = %q; want %q", cfg.Floor.RefuseMarks, want)
	}
	if want := []string{"main", "scout"}; !reflect.DeepEqual(cfg.BotOrder, want) {
		t.Errorf("BotOrder = %q; want %q", cfg.BotOrder, want)
	}
	wantMain := &Bot{
		Name:        "main",
		Behaviors:   []string{"tasks", "goal", "offload"},
		Ceiling:     []string{"read", "write"},
		Grants:      []string{"offload.search", "tasks.create"},
		RetryBudget: 3,
		Config: map[string]map[string]any{
			"goal": {
				"loops": 3.0,
				"ratio": 0.5,
				"name":  "ship it",
				"on":    true,
				"tags":  []any{"a", 1.0, []any{2.5}},
				"when":  "1979-05-27T07:32:00Z",
				"day":   "1979-05-27",
				"local": "1979-05-27T07:32:00",
				"at":    "07:32:00",
				"limits": map[string]any{
					"soft": 1.0,
					"hard": map[string]any{"max": 2.0},
				},
				"steps": []any{
					map[string]any{"text": "one"},
					map[string]any{"text": "two"},
				},
			},
			"tasks": {},
		},
	}
	if !reflect.DeepEqual(cfg.Bots["main"], wantMain) {
		t.Errorf("bots.main = %#v\nwant %#v", cfg.Bots["main"], wantMain)
	}
	wantScout := &Bot{
		Name: "scout", Behaviors: []string{}, Ceiling: []string{}, Grants: []string{},
		RetryBudget: DefaultRetryBudget, Config: map[string]map[string]any{},
	}
	if !reflect.DeepEqual(cfg.Bots["scout"], wantScout) {
		t.Errorf("bots.scout = %#v\nwant %#v", cfg.Bots["scout"], wantScout)
	}
	for key, want := range map[string]int{
		"bots.main.behaviors":     12,
		"bots.main.behaviors[3]":  12,
		"bots.main.grants":        14,
		"bots.main.config.goal":   17,
		"bots.main.config.tasks":  35,
		"bots.scout.grants":       37, // not written: the bot's table
		"engine.callback_budget":  6,
		"bots.main.config.goal.x": 17,
		"nothing.here":            0,
	} {
		if got := cfg.Line(key); got != want {
			t.Errorf("Line(%q) = %d; want %d", key, got, want)
		}
	}
	if err := cfg.Validate(func(string) bool { return true }); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestDefaults(t *testing.T) {
	for _, src := range []string{"", "# nothing\n", "[engine]\n[floor]\n[bots]\n"} {
		cfg, err := Parse("/srv/app/attune.toml", []byte(src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		want := Default("/srv/app")
		want.File = "/srv/app/attune.toml"
		cfg.lines, want.lines = nil, nil
		if !reflect.DeepEqual(cfg, want) {
			t.Errorf("%q: got %+v\nwant %+v", src, cfg, want)
		}
	}
	d := Default("/srv/app")
	if d.Engine.Store != "sqlite:/srv/app/.attune/state.db" || d.Engine.Project != "default" ||
		d.Engine.CallbackBudget != time.Second || len(d.Bots) != 0 {
		t.Errorf("Default = %+v", d)
	}
}

func TestBotDefaultsAndEmptyBehaviors(t *testing.T) {
	cfg, err := Parse("attune.toml", []byte("[bots.idle]\nbehaviors = []\n"))
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.Bots["idle"]
	if b.RetryBudget != 2 || len(b.Behaviors) != 0 || b.Config == nil {
		t.Errorf("bot = %+v", b)
	}
	if err := cfg.Validate(func(string) bool { return false }); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestBotOrderIsOrderOfAppearance(t *testing.T) {
	src := "bots.zeta.behaviors = []\n[bots.alpha]\n[bots.mid]\n[bots.zeta.config]\n"
	cfg, err := Parse("attune.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"zeta", "alpha", "mid"}; !reflect.DeepEqual(cfg.BotOrder, want) {
		t.Errorf("BotOrder = %q; want %q", cfg.BotOrder, want)
	}
}

func TestConfigForCopies(t *testing.T) {
	cfg, err := Parse("attune.toml", []byte("[bots.b]\nbehaviors = [\"p\"]\n[bots.b.config.p]\nlist = [1]\nt = {k = 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.Bots["b"]
	c := b.ConfigFor("p")
	c["list"].([]any)[0] = "changed"
	c["t"].(map[string]any)["k"] = "changed"
	c["new"] = true
	if !reflect.DeepEqual(b.Config["p"], map[string]any{"list": []any{1.0}, "t": map[string]any{"k": 1.0}}) {
		t.Errorf("ConfigFor shares data: %v", b.Config["p"])
	}
	if got := b.ConfigFor("absent"); got == nil || len(got) != 0 {
		t.Errorf("ConfigFor(absent) = %v; want an empty map", got)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "attune.toml"))
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %#v; want an *Error wrapping fs.ErrNotExist", err)
	}
	if !strings.HasSuffix(e.Error(), "attune.toml: cannot read: no such file or directory") {
		t.Errorf("err = %q", e)
	}
}

func TestErrorfAndLine(t *testing.T) {
	src := "[bots.main]\nbehaviors = [\"tasks\"]\n\ngrants = [\n  \"tasks.create\",\n  \"tasks.nope\",\n]\n"
	cfg, err := Parse("attune.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Errorf("bots.main.grants[2]", "grant %q names no method of this bot's programs", "tasks.nope")
	want := `attune.toml:4: bots.main.grants[2]: grant "tasks.nope" names no method of this bot's programs`
	if e.Error() != want {
		t.Errorf("Errorf = %q\nwant %q", e, want)
	}
}

func TestErrorFormat(t *testing.T) {
	for _, c := range []struct {
		e    Error
		want string
	}{
		{Error{File: "a.toml", Line: 3, Path: "engine.store", Msg: "m"}, "a.toml:3: engine.store: m"},
		{Error{File: "a.toml", Line: 3, Col: 7, Msg: "m"}, "a.toml:3:7: m"},
		{Error{File: "a.toml", Path: "bots", Msg: "m"}, "a.toml: bots: m"},
		{Error{Line: 2, Path: "bots", Msg: "m"}, "line 2: bots: m"},
		{Error{Path: "bots", Msg: "m"}, "bots: m"},
		{Error{Msg: "m"}, "m"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%+v: got %q; want %q", c.e, got, c.want)
		}
	}
	l := &List{Errors: []*Error{{Msg: "one"}, {Msg: "two"}}}
	if l.Error() != "one\ntwo" {
		t.Errorf("List = %q", l.Error())
	}
	var e *Error
	if !errors.As(error(l), &e) || e.Msg != "one" {
		t.Errorf("errors.As through a List found %v", e)
	}
	if got := Errors(l); len(got) != 2 {
		t.Errorf("Errors(list) = %v", got)
	}
	if got := Errors(&Error{Msg: "x"}); len(got) != 1 {
		t.Errorf("Errors(error) = %v", got)
	}
	if Errors(nil) != nil || Errors(os.ErrClosed) != nil {
		t.Error("Errors of a foreign error is not nil")
	}
}

func TestParseStore(t *testing.T) {
	dir := "/srv/app"
	for _, c := range []struct {
		spec, kind, target, err string
	}{
		{"memory:", "memory", "", ""},
		{"sqlite:.attune/state.db", "sqlite", "/srv/app/.attune/state.db", ""},
		{"sqlite:/var/lib/attune.db", "sqlite", "/var/lib/attune.db", ""},
		{"sqlite:///var/lib/attune.db", "sqlite", "/var/lib/attune.db", ""},
		{"sqlite://data/x.sqlite", "sqlite", "/srv/app/data/x.sqlite", ""},
		{"state.db", "sqlite", "/srv/app/state.db", ""},
		{"../shared/state.db", "sqlite", "/srv/shared/state.db", ""},
		{"/abs/state.db", "sqlite", "/abs/state.db", ""},
		{"postgres://u:p@db/attune?sslmode=disable", "postgres", "postgres://u:p@db/attune?sslmode=disable", ""},
		{"postgresql:///attune?host=/run/pg", "postgres", "postgresql:///attune?host=/run/pg", ""},
		{"", "", "", "empty store"},
		{"memory", "", "", `did you mean "memory:"?`},
		{"sqlite:", "", "", "needs a file path"},
		{"mysql://db/x", "", "", `unknown store kind "mysql:"`},
		{"Memory:", "", "", "store kinds are lower case"},
		{"state.json", "", "", `unknown store "state.json"`},
		{"postgres://u:secret@db:bad/x", "", "", "not a valid postgres URL"},
	} {
		kind, target, err := ParseStore(c.spec, dir)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseStore(%q) err = %v; want it to contain %q", c.spec, err, c.err)
			} else if strings.Contains(err.Error(), "secret") {
				t.Errorf("ParseStore(%q) err = %v shows the password", c.spec, err)
			}
			continue
		}
		if err != nil || kind != c.kind || target != c.target {
			t.Errorf("ParseStore(%q) = %q, %q, %v; want %q, %q", c.spec, kind, target, err, c.kind, c.target)
		}
	}
}

func TestStoreIsNormalized(t *testing.T) {
	for spec, want := range map[string]string{
		`"memory:"`:             "memory:",
		`"db/x.db"`:             "sqlite:/srv/app/db/x.db",
		`"sqlite:x.db"`:         "sqlite:/srv/app/x.db",
		`"postgres://h/attune"`: "postgres://h/attune",
	} {
		cfg, err := Parse("/srv/app/attune.toml", []byte("engine.store = "+spec))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Engine.Store != want {
			t.Errorf("store %s: Store = %q; want %q", spec, cfg.Engine.Store, want)
		}
		if _, _, err := ParseStore(cfg.Engine.Store, ""); err != nil {
			t.Errorf("store %s: the normalized spec does not parse: %v", spec, err)
		}
	}
}

func TestConcurrentReads(t *testing.T) {
	cfg, err := Load(filepath.Join("testdata", "full.toml"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	for range 8 {
		go func() {
			defer func() { done <- true }()
			for range 100 {
				_ = cfg.Validate(func(string) bool { return false })
				_ = cfg.Errorf("bots.main.grants[1]", "x").Error()
				_ = cfg.Bots["main"].ConfigFor("goal")
			}
		}()
	}
	for range 8 {
		<-done
	}
}

func TestValidateCoversBotsMissingFromBotOrder(t *testing.T) {
	c := Default(".")
	c.Bots["a"] = &Bot{Name: "a", Behaviors: []string{"p"}}
	checkErrors(t, c.Validate(func(string) bool { return false }),
		[]string{`bots.a.behaviors[1]: no pack holds program "p"`})
}

func TestSyntaxError(t *testing.T) {
	if SyntaxError("f", nil, nil) != nil {
		t.Error("SyntaxError(nil) is not nil")
	}
	data := []byte("name = 'x'\n[config\n")
	var v map[string]any
	_, err := toml.Decode(string(data), &v)
	if e := SyntaxError("s.toml", data, err); e == nil || !strings.HasPrefix(e.Error(), "s.toml:2:8: ") {
		t.Errorf("SyntaxError = %v", e)
	}
}
