package engine

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

// testEngine builds an engine on a memory store with a scratch pack.
func testEngine(t testing.TB, cfgTOML string, programs map[string]string, o ...func(*Options)) *Engine {
	t.Helper()
	cfg, err := config.Parse("attune.toml", []byte(cfgTOML))
	if err != nil {
		t.Fatal(err)
	}
	fsys := fsMap{}
	for name, src := range programs {
		fsys[name] = &fstest.MapFile{Data: []byte(src)}
	}
	opts := Options{Config: cfg, Store: store.NewMemory(), PacksFirst: []pin.Pack{{Name: "scratch", FS: fsys}}}
	for _, f := range o {
		f(&opts)
	}
	e, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func start(t testing.TB, e *Engine, id, bot string) *Instance {
	t.Helper()
	i, err := e.Start(context.Background(), StartOptions{ID: id, Bot: bot})
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func echoTool(path string, effects ...string) HostTool {
	return HostTool{Path: path, Effects: effects, Core: func(_ context.Context, c CoreCall) (any, error) { return c.Args, nil }}
}

// fsMap is the scratch pack's file system; tests edit it in place.
type fsMap = fstest.MapFS
