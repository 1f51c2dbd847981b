package luabind

import (
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	lua "github.com/attune-dev/attune/internal/lua"
)

// Ambient says what a piece of script may call right now.
type Ambient uint8

const (
	// Register is a program's top level: register forms record declarations.
	Register Ambient = 1 << iota
	// Callback is tool dispatch, boundaries, methods, subscriptions, commands.
	Callback
	// Reducer is a pure fold: no proposals, calls or notes.
	Reducer
)

// AnyAmbient allows a Func everywhere.
const AnyAmbient = Register | Callback | Reducer

func (a Ambient) String() string {
	switch a {
	case Register:
		return "register"
	case Callback:
		return "callback"
	case Reducer:
		return "reducer"
	}
	return "none"
}

// Options configure a new State. The zero value is usable.
type Options struct {
	// Budget is the time a callback (or a top level) may run; default 1s.
	Budget time.Duration
	// Seed seeds math.random for this state.
	Seed uint64
	// DrawKey, if set, names the call a draw of math.random belongs to:
	// the draws are seeded from Seed and the key at the first draw of each
	// call, so they do not depend on how long the state has lived (a
	// state made anew after a crash draws what a replay draws).
	DrawKey func() string
	// Print receives what the script prints; nil drops it.
	Print func(string)
	// Watchdog, if set, cancels the state's running callback when the host's
	// heap goes over its limit (watchdog.go).
	Watchdog *Watchdog
}

// State is one sandboxed Lua interpreter. Not safe for concurrent use.
type State struct {
	L       *lua.LState
	ambient Ambient
	budget  *budget
	// ListMeta marks tables that are lists even when empty.
	ListMeta *lua.LTable
	// Owner is the engine's object this state belongs to (its registry).
	Owner any
	rng   *rand.Rand
	pcg   *rand.PCG
	seed  uint64
	// drawKey names the call of a draw; drawn is the key rng is seeded for
	drawKey func() string
	drawn   string
	keyed   bool
	print   func(string)
	// protected counts the protected calls running (protect.go).
	protected int
	// pending is the error of a conversion into this state that went over
	// the data limits outside a callback; the next callback fails with it
	// (convert.go).
	pending *LimitError
	// called is the call-stack index of the function the innermost
	// Call of this state runs (ReturnsToCaller)
	called int
	// tail: the library function declared with Leaves that runs last was
	// called with "return f(...)" from the callback (ReturnsToCaller)
	tail bool
	// keys are map keys converted lately, boxed (keyBox)
	keys [keyBoxes]lua.LValue
	// lib is the library the state opened (Open), for naming the nearest
	// function when a call finds none
	lib *Library
}

// maxRep bounds string.rep's result: a single built-in call cannot be
// interrupted by the budget, so its input must be bounded (docs/limits.md).
const maxRep = 16 << 20

// libs is the library set every state shares, built once and never
// changed after: gopher-lua's Go functions keep no state of their own, so
// one function value serves every interpreter. Scripts never reach the
// shared tables themselves: each state sees per-state proxy tables whose
// protected metatable reads through to them, so a script that writes
// string.x changes only its own state (R1.2).
type libs struct {
	base    map[string]lua.LValue // base functions, sandboxed
	gmeta   *lua.LTable           // metatable of every state's globals: reads through to base
	str     *lua.LTable           // string library (dump removed, rep bounded)
	proxies map[string]*lua.LTable
	strMeta *lua.LTable // metatable of string values
	// names are the sandbox's own names ("print", "string.upper"), for
	// naming the nearest one when a script calls a name that is not defined
	names []string
}

var shared = sync.OnceValue(buildLibs)

// builderOptions are those of the states that only build shared values
// (the libraries here, NewLibrary's functions): small, grown on need,
// instead of gopher-lua's defaults (a fixed stack of 256 frames and a
// registry of 5120 values), which every process building them allocated
// and faulted in.
func builderOptions() lua.Options {
	return lua.Options{SkipOpenLibs: true, CallStackSize: 200, RegistrySize: 128, RegistryMaxSize: 1 << 20,
		RegistryGrowStep: 128, MinimizeStackMemory: true}
}

func buildLibs() *libs {
	L := lua.NewState(builderOptions())
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
	} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	g := L.G.Global
	out := &libs{base: map[string]lua.LValue{}, proxies: map[string]*lua.LTable{}}
	removed := map[string]bool{"dofile": true, "loadfile": true, "collectgarbage": true, "module": true,
		"getfenv": true, "setfenv": true, "newproxy": true, "_printregs": true, "require": true,
		"_GOPHER_LUA_VERSION": true, "_G": true, "print": true, "load": true, "loadstring": true,
		"string": true, "table": true, "math": true, "coroutine": true, "channel": true, "package": true}
	g.ForEach(func(k, v lua.LValue) {
		if name, ok := k.(lua.LString); ok && !removed[string(name)] {
			out.base[string(name)] = v
		}
	})
	load := L.NewFunction(loadChunk) // text only, under the compile limits and the budget
	out.base["loadstring"] = load
	out.base["pcall"], out.base["xpcall"] = protectedCalls(L) // protect.go: bounded nesting
	out.base["load"] = load
	out.base["print"] = L.NewFunction(func(L *lua.LState) int {
		st := stateOf(L)
		if st == nil || st.print == nil {
			return 0
		}
		parts := make([]string, L.GetTop())
		for i := range parts {
			parts[i] = L.ToStringMeta(L.Get(i + 1)).String()
		}
		st.print(strings.Join(parts, "\t"))
		return 0
	})
	mathT := g.RawGetString("math").(*lua.LTable)
	mathT.RawSetString("random", L.NewFunction(func(L *lua.LState) int {
		st := stateOf(L)
		if st == nil {
			L.RaiseError("math.random called outside a callback")
		}
		return st.mathRandom(L)
	}))
	mathT.RawSetString("randomseed", L.NewFunction(func(L *lua.LState) int {
		st := stateOf(L)
		if st == nil {
			L.RaiseError("math.randomseed called outside a callback")
		}
		seed := uint64(L.CheckInt64(1))
		st.pcg.Seed(seed, seed^0x9e3779b97f4a7c15)
		if st.drawKey != nil { // for the rest of this call
			st.drawn, st.keyed = st.drawKey(), true
		}
		return 0
	}))
	str := g.RawGetString("string").(*lua.LTable)
	str.RawSetString("dump", lua.LNil)
	str.RawSetString("__index", lua.LNil)
	rep := str.RawGetString("rep").(*lua.LFunction)
	str.RawSetString("rep", L.NewFunction(func(L *lua.LState) int {
		n := L.CheckInt(2)
		if l := len(L.CheckString(1)); n > 0 && l > 0 && n > maxRep/l { // no product that wraps
			L.RaiseCoded("memory", "memory: string.rep: result over %d bytes", maxRep)
		}
		s, count := L.Get(1), L.Get(2)
		L.Push(rep)
		L.Push(s)
		L.Push(count)
		L.Call(2, 1)
		return 1
	}))
	boundBuiltins(L, out.base, str, g.RawGetString("table").(*lua.LTable)) // builtins.go
	out.str = str
	for _, name := range []string{"string", "table", "math"} {
		t := g.RawGetString(name).(*lua.LTable)
		out.proxies[name] = copyOnRead(L, t)
		t.ForEach(func(k, _ lua.LValue) {
			if ks, ok := k.(lua.LString); ok {
				out.names = append(out.names, name+"."+string(ks))
			}
		})
	}
	for name := range out.base {
		out.names = append(out.names, name)
	}
	sort.Strings(out.names)
	out.gmeta = globalsMeta(L, out.base, nil)
	out.strMeta = L.CreateTable(0, 2)
	out.strMeta.RawSetString("__index", str)
	out.strMeta.RawSetString("__metatable", lua.LFalse)
	return out
}

// NewState builds a sandboxed state per R1.11: base, string, table
// and math (shared, read through per-state proxies), with dofile,
// loadfile, binary chunks, collectgarbage, module, getfenv, setfenv,
// newproxy, _printregs and string.dump removed, Lua's require absent (the
// engine installs its own), print routed to Options.Print and math.random
// seeded per state.
func NewState(o Options) *State {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       200,
		RegistrySize:        128,
		RegistryMaxSize:     1 << 20,
		RegistryGrowStep:    128,
		MinimizeStackMemory: true,
	})
	if o.Budget <= 0 {
		o.Budget = time.Second
	}
	s := &State{L: L, ambient: Register, budget: newBudget(o.Budget), print: o.Print}
	s.budget.s = s
	if o.Watchdog != nil {
		s.budget.wd = o.Watchdog
		o.Watchdog.add(s.budget)
	}
	// A globals table sized for the sandbox and the engine's forms, so
	// filling it does not grow it step by step.
	// The base functions are read through a protected metatable from one
	// shared table: filling a Lua table costs allocations per key.
	g0 := L.CreateTable(0, 24)
	g0.Metatable = shared().gmeta
	L.G.Global, L.Env = g0, g0
	s.seed, s.drawKey = o.Seed, o.DrawKey
	s.pcg = rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15)
	s.rng = rand.New(s.pcg)
	lb := shared()
	g := L.G.Global
	g.RawSetString("_G", g)
	for name, m := range lb.proxies {
		t := L.CreateTable(0, 0)
		t.Metatable = m
		g.RawSetString(name, t)
	}
	L.SetMetatable(lua.LString(""), lb.strMeta)
	s.ListMeta = L.CreateTable(0, 1)
	s.ListMeta.RawSetString("__attune_list", lua.LTrue)
	return s
}

// stateOf finds the State whose callback is running in L (nil outside
// one): every callback runs under its state's budget as context.
func stateOf(L *lua.LState) *State {
	if b, ok := L.Context().(*budget); ok {
		return b.s
	}
	return nil
}

func (s *State) mathRandom(L *lua.LState) int {
	if s.drawKey != nil {
		if k := s.drawKey(); !s.keyed || k != s.drawn {
			s.drawn, s.keyed = k, true
			h := s.seed
			for i := 0; i < len(k); i++ { // FNV-1a, the same in every process
				h ^= uint64(k[i])
				h *= 1099511628211
			}
			s.pcg.Seed(h, h^0x9e3779b97f4a7c15)
		}
	}
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(s.rng.Float64()))
	case 1:
		n := L.CheckInt(1)
		if n < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(lua.LNumber(s.rng.IntN(n) + 1))
	default:
		lo, hi := L.CheckInt(1), L.CheckInt(2)
		if hi < lo {
			L.ArgError(2, "interval is empty")
		}
		L.Push(lua.LNumber(s.rng.IntN(hi-lo+1) + lo))
	}
	return 1
}

// Ambient returns the state's current ambient.
func (s *State) Ambient() Ambient { return s.ambient }

// SetAmbient switches the ambient and returns the previous one.
func (s *State) SetAmbient(a Ambient) Ambient {
	old := s.ambient
	s.ambient = a
	return old
}

// Close releases the interpreter.
func (s *State) Close() {
	s.budget.close()
	s.L.Close()
}

// globalsMeta builds a protected metatable whose __index is one shared
// table holding base and extra.
//
// The first read of a name copies it into the state's own globals, so a
// state pays for the names its script uses, once, and every later read is
// a plain global read. (A script that sets such a global to nil reads the
// shared one again, as before it was copied.)
func globalsMeta(L *lua.LState, base map[string]lua.LValue, extra map[string]*lua.LFunction) *lua.LTable {
	t := L.CreateTable(0, len(base)+len(extra))
	for name, fn := range base {
		t.RawSetString(name, fn)
	}
	for name, fn := range extra {
		t.RawSetString(name, fn)
	}
	return copyOnRead(L, t)
}

// copyOnRead returns a protected metatable whose __index reads shared
// table t and copies what it finds into the per-state table it indexes.
func copyOnRead(L *lua.LState, t *lua.LTable) *lua.LTable {
	m := L.CreateTable(0, 2)
	m.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		g, ok := L.Get(1).(*lua.LTable)
		k, isStr := L.Get(2).(lua.LString)
		if !ok || !isStr {
			L.Push(lua.LNil)
			return 1
		}
		v := t.RawGetString(string(k))
		if v != lua.LNil {
			g.RawSetString(string(k), v)
		}
		L.Push(v)
		return 1
	}))
	m.RawSetString("__metatable", lua.LFalse)
	return m
}
