package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// externalHost is a Go host in a module of its own: it imports the engine,
// loads a configuration, runs a guard (one call allowed, one refused) and a
// method, and prints what it saw.
const externalHost = `package main

import (
	"context"
	"fmt"
	"os"
	"testing/fstest"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

const guard = ` + "`" + `
guard.tool("fs/*", function(call, invoke)
  if call.args.path == ".env" then return refuse("no .env") end
  return invoke()
end)
define.reducer("count", function(s, a) s.n = s.n + a.by return s end, {init = {n = 0}})
define.method("count", "add", function(ctx, s, input)
  propose({type = "add", by = input.by})
  return s.n + input.by
end, {kind = "command", input = {by = "number"}})
` + "`" + `

func main() {
	ctx := context.Background()
	cfg, err := config.Parse("attune.toml", []byte("[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n"))
	if err != nil {
		fail(err)
	}
	e, err := engine.New(ctx, engine.Options{Config: cfg, Store: store.NewMemory(),
		PacksFirst: []pin.Pack{{Name: "host", FS: fstest.MapFS{"g.lua": {Data: []byte(guard)}}}}})
	if err != nil {
		fail(err)
	}
	defer e.Close()
	if err := e.RegisterTool(engine.HostTool{Path: "fs/read", Effects: []string{"read"},
		Core: func(_ context.Context, c engine.CoreCall) (any, error) { return "contents", nil }}); err != nil {
		fail(err)
	}
	i, err := e.Start(ctx, engine.StartOptions{ID: "host", Bot: "main"})
	if err != nil {
		fail(err)
	}
	ok := i.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": "README"}})
	refused := i.Tool(ctx, engine.ToolCall{Path: "fs/read", Args: map[string]any{"path": ".env"}})
	m := i.Method(ctx, engine.MethodCall{Owner: "count", Method: "add", Input: map[string]any{"by": 2}})
	fmt.Printf("ok=%s:%v refused=%s:%s:%s method=%s:%v:%d\n", ok.Status, ok.Result,
		refused.Status, refused.RefusedBy, refused.Reason, m.Status, m.Result, m.Revision)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
`

// A module that is not attune's imports the engine (through a replace in
// its own go.mod pointing at this checkout, as a host developing against a
// local copy does), builds, runs a guard and a method, and passes go vet:
// go.mod of attune itself has no replace, so nothing the engine needs
// (its gopher-lua among it) is lost to an importing module.
func TestExternalModule(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "replace" {
			t.Fatalf("attune's go.mod has a replace (%q): Go ignores it in a module that imports attune", line)
		}
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/host\n\ngo 1.26.0\n\nrequire github.com/attune-dev/attune v0.0.0\n\nreplace github.com/attune-dev/attune => " + root + "\n"
	for name, data := range map[string]string{"go.mod": gomod, "go.sum": string(sum), "main.go": externalHost} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gocmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	gocmd("mod", "tidy")
	gocmd("vet", "./...")
	out := gocmd("run", ".")
	want := "ok=ok:contents refused=refused:guard:no .env method=ok:2:1\n"
	if out != want {
		t.Errorf("the external host printed %q, want %q", out, want)
	}
}
