package engine

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	lua "github.com/attune-dev/attune/internal/lua"

	"github.com/attune-dev/attune/luabind"
)

const luabindCallback = luabind.Callback

type goCaller interface{ Call(any) any }
type goImpl struct{ n int }

//go:noinline
func (g *goImpl) Call(a any) any { g.n++; return a }

// baselineCaller is a package variable so the call cannot be devirtualized.
var baselineCaller goCaller = &goImpl{}

// BenchmarkGoCallBaseline is the floor the tool chain is measured against:
// a Go func called through an interface (not inlined, not devirtualized).
func BenchmarkGoCallBaseline(b *testing.B) {
	var arg any = "x"
	b.ReportAllocs()
	for b.Loop() {
		baselineCaller.Call(arg)
	}
}

func benchInstance(b *testing.B, programs map[string]string) *Instance {
	behaviors := `[]`
	if len(programs) > 0 {
		behaviors = `["g"]`
	}
	e := testEngine(b, "[bots.main]\nbehaviors = "+behaviors+"\nceiling = [\"read\"]\n", programs)
	e.RegisterTool(HostTool{Path: "fs/read", Effects: []string{"read"}, Core: func(_ context.Context, c CoreCall) (any, error) { return c.Args, nil }})
	i, err := e.Start(context.Background(), StartOptions{ID: "bench", Bot: "main"})
	if err != nil {
		b.Fatal(err)
	}
	return i
}

// BenchmarkToolFastPath: a host tool no guard or hook matches (R4.2).
func BenchmarkToolFastPath(b *testing.B) {
	i := benchInstance(b, map[string]string{"g.lua": `guard.tool("other/*", function(c, invoke) return invoke() end)`})
	ctx := context.Background()
	call := ToolCall{Path: "fs/read", Args: "x"}
	b.ReportAllocs()
	for b.Loop() {
		if i.Tool(ctx, call).Status != StatusOK {
			b.Fatal("not ok")
		}
	}
}

// BenchmarkToolOneGuard: one Lua guard that invokes unchanged.
func BenchmarkToolOneGuard(b *testing.B) {
	i := benchInstance(b, map[string]string{"g.lua": `guard.tool("fs/read", function(c, invoke) return invoke() end)`})
	ctx := context.Background()
	call := ToolCall{Path: "fs/read", Args: "x", CallID: "c"}
	b.ReportAllocs()
	for b.Loop() {
		if i.Tool(ctx, call).Status != StatusOK {
			b.Fatal("not ok")
		}
	}
}

// BenchmarkToolFullChain: three Lua guards, a pre and a post hook.
func BenchmarkToolFullChain(b *testing.B) {
	i := benchInstance(b, map[string]string{"g.lua": `
guard.tool("fs/read", function(c, invoke) return invoke() end)
guard.tool("fs/*", function(c, invoke) mark(c, "seen") return invoke() end)
guard.tool("fs/**", function(c, invoke) return invoke(c.args) end)
hook.tool("fs/read", {pre = function(c) end, post = function(c, o) return nil end})`})
	ctx := context.Background()
	call := ToolCall{Path: "fs/read", Args: "x", CallID: "c"}
	b.ReportAllocs()
	for b.Loop() {
		if i.Tool(ctx, call).Status != StatusOK {
			b.Fatal("not ok")
		}
	}
}

const smallProgram = `
local count = 0
guard.tool("fs/*", function(c, invoke) count = count + 1 return invoke() end)
hook.round("end", function(b) if count > 10 then notify("busy", "ambient") end end)
`

// BenchmarkRegistryLoad: registering an already-compiled program for one
// more instance (the compile cache is warm after the first).
func BenchmarkRegistryLoad(b *testing.B) {
	e := testEngine(b, "[bots.main]\nbehaviors = [\"g\"]\n", map[string]string{"g.lua": smallProgram})
	ctx := context.Background()
	i := start(b, e, "warm", "main")
	p := i.Pin()
	b.ReportAllocs()
	for b.Loop() {
		s, err := e.newSet(ctx, i, p)
		if err != nil {
			b.Fatal(err)
		}
		s.release()
	}
}

// TestRegistryMemory reports the heap retained per live registry of a
// small program (goal: <= 64 KiB).
func TestRegistryMemory(t *testing.T) {
	e := testEngine(t, "[bots.main]\nbehaviors = [\"g\"]\n", map[string]string{"g.lua": smallProgram})
	ctx := context.Background()
	i := start(t, e, "warm", "main")
	p := i.Pin()
	const n = 1000
	sets := make([]*regSet, 0, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		s, err := e.newSet(ctx, i, p)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, s)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n / 1024
	t.Logf("retained heap per live registry: %.1f KiB", per)
	if per > 64 {
		t.Errorf("retained %.1f KiB per registry; the goal is <= 64 KiB", per)
	}
	for _, s := range sets {
		s.release()
	}
}

// BenchmarkHostFunctionFromLua: one engine function called from Lua
// (config with a key), per call, inside one callback (goal <= 100 ns, 0 allocs).
func BenchmarkHostFunctionFromLua(b *testing.B) {
	e := testEngine(b, "[bots.main]\nbehaviors = [\"g\"]\n[bots.main.config.g]\nk = 1\n", map[string]string{"g.lua": `
function bench(n) for i = 1, n do config("k") end end
function empty(n) for i = 1, n do end end`})
	i := start(b, e, "x", "main")
	r := i.cur.Load().regs[0]
	fr := newFrame(nil, context.Background(), i, r, &decl{id: "bench"}, "bench")
	for _, fn := range []string{"empty", "bench"} {
		b.Run(fn, func(b *testing.B) {
			f := r.st.L.GetGlobal(fn)
			b.ReportAllocs()
			b.ResetTimer()
			for left := b.N; left > 0; left -= 10000 { // chunks: one callback stays within its budget
				if err := r.call(fr, luabindCallback, f, 0, lua.LNumber(min(left, 10000))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkToolOneGuardParallel: the one-guard call on one instance per
// goroutine; ns/op against BenchmarkToolOneGuard gives the scaling across
// instances (goal: >= 0.8 x cores x the one-instance rate).
func BenchmarkToolOneGuardParallel(b *testing.B) {
	e := testEngine(b, "[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n",
		map[string]string{"g.lua": `guard.tool("fs/read", function(c, invoke) return invoke() end)`})
	e.RegisterTool(HostTool{Path: "fs/read", Effects: []string{"read"}, Core: func(_ context.Context, c CoreCall) (any, error) { return c.Args, nil }})
	var n atomic.Int64
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i, err := e.Start(ctx, StartOptions{ID: fmt.Sprint("p", n.Add(1)), Bot: "main"})
		if err != nil {
			b.Error(err)
			return
		}
		call := ToolCall{Path: "fs/read", Args: "x", CallID: "c"}
		for pb.Next() {
			if i.Tool(ctx, call).Status != StatusOK {
				b.Error("not ok")
				return
			}
		}
	})
}
