package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attune-dev/attune/behaviors"
	lua "github.com/attune-dev/attune/internal/lua"
	"github.com/attune-dev/attune/internal/progcache"
	"github.com/attune-dev/attune/luabind"
)

// cachedEngine is testEngine with the program cache in dir (its key in a
// folder of the test's own).
func cachedEngine(t *testing.T, dir string, programs map[string]string) *Engine {
	t.Helper()
	return testEngine(t, chainCfg+"[engine]\nprogram_cache = \""+filepath.ToSlash(dir)+"\"\n", programs)
}

func entries(t *testing.T, dir string) map[string]os.FileInfo {
	t.Helper()
	out := map[string]os.FileInfo{}
	list, _ := os.ReadDir(dir)
	for _, e := range list {
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = fi
	}
	return out
}

// TestProgramCacheErrorPositions: a guard that throws, loaded from the
// program cache by a second engine (another process's), fails with the
// same message and file:line as the one compiled from source, in Lua and
// in the Scheme-style forms (whose lowering keeps the lines).
func TestProgramCacheErrorPositions(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for file, src := range map[string]string{
		"g.lua": "local function check(args)\n\n  return args.x.y\nend\nguard.tool(\"fs/read\", function(call, invoke)\n  check(call.args)\n  return invoke()\nend)\n",
		"g.scm": "(guard/tool \"fs/read\"\n  (lambda (call invoke)\n\n    (error \"boom\")\n    (invoke)))\n",
	} {
		t.Run(file, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "programs")
			run := func() Outcome {
				e := cachedEngine(t, dir, map[string]string{file: src})
				e.RegisterTool(echoTool("fs/read", "read"))
				return start(t, e, "a", "main").Tool(context.Background(), ToolCall{Path: "fs/read", Args: map[string]any{"x": 1}})
			}
			fresh := run()
			made := entries(t, dir)
			if len(made) != 1 {
				t.Fatalf("%d cache entries after the first load, want 1", len(made))
			}
			cached := run()
			for name, fi := range entries(t, dir) {
				if !os.SameFile(fi, made[name]) {
					t.Fatalf("entry %s was written again: the second load did not use it", name)
				}
			}
			want := map[string]string{"g.lua": "g.lua:3", "g.scm": "g.scm:4"}[file]
			if fresh.Status != StatusFailed || !strings.Contains(fresh.Error, want) {
				t.Fatalf("from source: %+v, want a failure at %s", fresh, want)
			}
			if cached.Status != fresh.Status || cached.Error != fresh.Error || cached.Reason != fresh.Reason {
				t.Fatalf("from the cache %q, from source %q", cached.Error, fresh.Error)
			}
		})
	}
}

// TestProgramCacheRebuildsSpoiledEntries: an engine that meets a spoiled
// entry compiles from source, runs the program as written, and writes a
// good entry in its place.
func TestProgramCacheRebuildsSpoiledEntries(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := filepath.Join(t.TempDir(), "programs")
	prog := map[string]string{"g.lua": `guard.tool("fs/read", function(call, invoke) return refuse("as written") end)`}
	call := func() Outcome {
		e := cachedEngine(t, dir, prog)
		e.RegisterTool(echoTool("fs/read", "read"))
		return start(t, e, "a", "main").Tool(context.Background(), ToolCall{Path: "fs/read", Args: "x"})
	}
	call()
	for _, spoil := range []func([]byte) []byte{
		func(b []byte) []byte { return b[:len(b)/2] },                                    // truncated
		func(b []byte) []byte { b[len(b)-40] ^= 1; return b },                            // corrupt
		func(b []byte) []byte { return append([]byte("garbage"), b[7:]...) },             // foreign
		func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("as"), []byte("no")) }, // edited
	} {
		var name string
		for n := range entries(t, dir) {
			name = filepath.Join(dir, n)
		}
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(name, spoil(bytes.Clone(data)), 0o600)
		if out := call(); out.Status != StatusRefused || out.Reason != "as written" {
			t.Fatalf("after a spoiled entry: %+v", out)
		}
		again, _ := os.ReadFile(name)
		if !bytes.Equal(again, data) {
			t.Fatalf("the spoiled entry was not rebuilt: %d bytes, was %d; %v", len(again), len(data), entries(t, dir))
		}
	}
}

// TestProgramCacheOff: ATTUNE_NO_PROGRAM_CACHE=1 and program_cache =
// false each turn the cache off: nothing is written.
func TestProgramCacheOff(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := filepath.Join(t.TempDir(), "programs")
	prog := map[string]string{"g.lua": `guard.tool("fs/read", function(call, invoke) return invoke() end)`}
	t.Setenv(NoProgramCacheEnv, "1")
	e := cachedEngine(t, dir, prog)
	start(t, e, "a", "main")
	if e.ProgramCacheDir() != "" {
		t.Fatalf("cache at %s with %s=1", e.ProgramCacheDir(), NoProgramCacheEnv)
	}
	t.Setenv(NoProgramCacheEnv, "")
	e = testEngine(t, chainCfg+"[engine]\nprogram_cache = false\n", prog)
	start(t, e, "a", "main")
	if e.ProgramCacheDir() != "" {
		t.Fatalf("cache at %s with program_cache = false", e.ProgramCacheDir())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the cache folder was made: %v", err)
	}
	e = cachedEngine(t, dir, prog)
	start(t, e, "a", "main")
	if e.ProgramCacheDir() != dir || len(entries(t, dir)) != 1 {
		t.Fatalf("cache on: dir %q, %d entries", e.ProgramCacheDir(), len(entries(t, dir)))
	}
}

// TestProgramCacheEveryProgram: every program of the engine's own pack
// and of the scenario packs under tests/, lowered and compiled as the
// engine does, comes back from the cache as the same proto (its encoding
// byte for byte: instructions, constants, nested protos, debug
// information). TestScenariosFromProgramCache (tests/) runs the scenarios
// from cached protos.
func TestProgramCacheEveryProgram(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	c := progcache.New(progcache.Options{Dir: filepath.Join(t.TempDir(), "p"), KeyFile: filepath.Join(t.TempDir(), "u", "k"), Build: progcache.BuildID(Version)})
	n := 0
	check := func(file string, src []byte) {
		code := src
		if isScheme(file) {
			lowered, err := lowerScheme(file, src)
			if err != nil {
				return // a program that fails to lower is never cached
			}
			code = []byte(lowered)
		}
		p, err := luabind.Compile(file, code)
		if err != nil {
			return // a program that fails to compile is never cached
		}
		sum := sha256.Sum256(src)
		sha := hex.EncodeToString(sum[:])
		if err := c.Put(file, sha, src, p); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		q, err := c.Get(file, sha, src)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		a, _ := lua.EncodeProto(nil, p)
		b, _ := lua.EncodeProto(nil, q)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the cached proto differs", file)
		}
		n++
	}
	fs.WalkDir(behaviors.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".lua") || strings.HasSuffix(path, ".scm")) {
			src, _ := fs.ReadFile(behaviors.FS, path)
			check(path, src)
		}
		return nil
	})
	filepath.WalkDir("../tests", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".lua") || strings.HasSuffix(path, ".scm")) {
			src, _ := os.ReadFile(path)
			check(filepath.Base(path), src)
		}
		return nil
	})
	if n < 40 {
		t.Fatalf("only %d programs checked", n)
	}
}
