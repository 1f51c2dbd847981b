package engine

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// coreCallSites type-checks the engine's own (non-test) sources and
// returns, for every call of a host core (a call whose function has the
// type of CoreFunc, named or not), the function it is made in.
func coreCallSites(t *testing.T) []string {
	t.Helper()
	// export data of the engine's dependencies, from the go command's
	// build cache (built already for this test binary)
	cmd := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Export", ".")
	cmd.Stderr = os.Stderr
	outp, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	dec := json.NewDecoder(strings.NewReader(string(outp)))
	for {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, os.ErrNotExist
		}
		return os.Open(exports[path])
	})
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	conf := types.Config{Importer: imp}
	pkg, err := conf.Check("github.com/attune-dev/attune/engine", fset, files, info)
	if err != nil {
		t.Fatalf("type-checking the engine: %v", err)
	}
	core := pkg.Scope().Lookup("CoreFunc").Type()
	var sites []string
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				tv, ok := info.Types[call.Fun]
				if ok && tv.IsValue() && types.Identical(tv.Type.Underlying(), core.Underlying()) {
					sites = append(sites, fd.Name.Name+" ("+fset.Position(call.Pos()).String()+")")
				}
				return true
			})
		}
	}
	sort.Strings(sites)
	return sites
}

// One function of the engine calls a host core: every entry into a tool
// call (the quick path, the quick path in a turn, the chain's core step
// that host calls, call/tool and harness-opened calls reach) goes through
// callCore (R4.2, R4.6).
func TestOneCoreCaller(t *testing.T) {
	sites := coreCallSites(t)
	if len(sites) != 1 || !strings.HasPrefix(sites[0], "callCore (") {
		t.Fatalf("host cores are called from %q; want one call, in callCore (hostcall.go)", sites)
	}
}

// ToolEnd completes a call by entering the same chain at its core step
// (the harness's outcome as the core's), so the chain's steps from the
// core on are the ones a call run in-process takes (R4.6, R4.7, R4.8).
func TestToolEndEntersTheChainAtItsCore(t *testing.T) {
	ctx := context.Background()
	var steps []string
	e := testEngine(t, chainCfg, map[string]string{"g.lua": externalProg}, func(o *Options) {
		o.Trace = func(s TraceStep) {
			if s.Path == "sh/run" {
				steps = append(steps, s.Step+":"+s.Verdict)
			}
		}
	})
	cores := 0
	e.RegisterTool(HostTool{Path: "sh/run", Effects: []string{"read"}, Core: func(context.Context, CoreCall) (any, error) {
		cores++
		return nil, nil
	}})
	i := start(t, e, "a", "main")
	if op := i.ToolBegin(ctx, ToolCall{Path: "sh/run", Args: map[string]any{"cmd": "ls"}}, "k1"); op.Status != StatusPending {
		t.Fatalf("begin: %+v", op)
	}
	begun := len(steps)
	out, err := i.ToolEnd(ctx, ToolCall{Path: "sh/run"}, "k1", "files", "")
	if err != nil || out.Status != StatusOK || len(out.Diagnostics) != 1 {
		t.Fatalf("end: %+v, %v", out, err)
	}
	if got, want := steps[begun:], []string{TraceCore + ":ok", TracePost + ":ok"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ToolEnd's steps %q, want %q", got, want)
	}
	if op := i.ToolBegin(ctx, ToolCall{Path: "sh/run", Args: map[string]any{"cmd": "x"}}, "k2"); op.Status != StatusPending {
		t.Fatalf("begin: %+v", op)
	}
	begun = len(steps)
	out, _ = i.ToolEnd(ctx, ToolCall{Path: "sh/run"}, "k2", nil, "exit 1")
	if got, want := steps[begun:], []string{TraceCore + ":failed", TracePostFail + ":ok"}; out.Status != StatusFailed || !reflect.DeepEqual(got, want) {
		t.Fatalf("ToolEnd's steps on failure %q, want %q (%+v)", got, want, out)
	}
	if cores != 0 {
		t.Fatalf("the host core ran %d times: the harness runs it", cores)
	}
}
