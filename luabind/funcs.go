package luabind

import (
	"fmt"
	"strings"

	lua "github.com/attune-dev/attune/internal/lua"
)

// Func is one script-visible engine function, declared as data. Every
// call goes through the same wrapper (see NewLibrary): the ambient check, the
// budget's pause for host work, then Fn.
type Func struct {
	// Name in the Scheme spelling: "define/tool", "call/method", "notify".
	// The Lua name replaces "/" with "." ("define.tool").
	Name string
	// Ambients that allow the call.
	Ambients Ambient
	// Register marks a register form (R1.4's error text).
	Register bool
	// Leaves marks a function that does host work (runs other chains, calls
	// the host, the store): the budget's clock stops while it runs.
	Leaves bool
	// Fn does the work. Arguments are at 1..GetTop() of s.L.
	Fn func(s *State) int
}

// LuaName is the dotted name scripts call.
func (f *Func) LuaName() string { return strings.ReplaceAll(f.Name, "/", ".") }

// AmbientError is the text of a call made where its ambient forbids it.
func AmbientError(f *Func, a Ambient) string {
	if a == Reducer {
		return fmt.Sprintf("%s is not available in the reducer ambient", f.Name)
	}
	if f.Register {
		return fmt.Sprintf("register form %s outside the register ambient (%s)", f.Name, a)
	}
	return fmt.Sprintf("%s is not available in the %s ambient", f.Name, a)
}

// Library is a set of Funcs built once and shared by every state that
// opens it: each function value is created once, and finds the state it
// runs in through the state's budget (the context every callback runs
// under), so opening a library costs a state no closure. Namespace tables
// (define, guard, call...) are per-state proxies with a protected
// metatable, so a script that writes define.tool changes only its own
// state. A Library is immutable and safe for concurrent use.
type Library struct {
	gmeta  *lua.LTable               // globals metatable: base functions and the top-level functions
	top    map[string]*lua.LFunction // "notify"
	spaces map[string]*lua.LTable    // "define" -> {__index = functions, __metatable = false}
	funcs  map[*Func]*lua.LFunction
	// Hints are further names a program in the forms may mean when it
	// calls a name that is not defined (the forms' special forms, in their
	// own spelling: "put!", "let*"). Set before the library is used.
	Hints []string
}

// NewLibrary builds the shared function values of funcs.
func NewLibrary(funcs []*Func) *Library {
	L := lua.NewState(builderOptions())
	lib := &Library{top: map[string]*lua.LFunction{}, spaces: map[string]*lua.LTable{}, funcs: map[*Func]*lua.LFunction{}}
	tables := map[string]*lua.LTable{}
	callback := map[string]bool{}
	for _, f := range funcs {
		fn := L.NewFunction(sharedFunc(f))
		lib.funcs[f] = fn
		parts := strings.Split(f.LuaName(), ".")
		if len(parts) == 1 {
			lib.top[parts[0]] = fn
			continue
		}
		if len(parts) != 2 {
			panic("luabind: a function name has at most one namespace: " + f.Name)
		}
		t, ok := tables[parts[0]]
		if !ok {
			t = L.CreateTable(0, 8)
			tables[parts[0]] = t
		}
		t.RawSetString(parts[1], fn)
		if !f.Register {
			callback[parts[0]] = true
		}
	}
	for name, t := range tables {
		if callback[name] {
			// read in callbacks, again and again: copy on the first read
			lib.spaces[name] = copyOnRead(L, t)
			continue
		}
		// register forms are read once, at the top level: read through
		m := L.CreateTable(0, 2)
		m.RawSetString("__index", t)
		m.RawSetString("__metatable", lua.LFalse)
		lib.spaces[name] = m
	}
	lib.gmeta = globalsMeta(L, shared().base, lib.top)
	return lib
}

// Func returns the shared function value of one of the library's Funcs.
func (lib *Library) Func(f *Func) *lua.LFunction { return lib.funcs[f] }

// Open makes the library's functions callable from the state's script.
func (s *State) Open(lib *Library) {
	s.lib = lib
	g := s.L.G.Global
	g.Metatable = lib.gmeta
	for name, m := range lib.spaces {
		t := s.L.CreateTable(0, 0)
		t.Metatable = m
		g.RawSetString(name, t)
	}
}

// sharedFunc is the choke point of a library function: every engine function
// passes through it. The state is the one whose callback is running.
func sharedFunc(f *Func) lua.LGFunction {
	return func(L *lua.LState) int {
		b, ok := L.Context().(*budget)
		if !ok {
			L.RaiseError("%s called outside a callback", f.Name)
		}
		s := b.s
		if s.ambient&f.Ambients == 0 {
			L.RaiseError("%s", AmbientError(f, s.ambient))
		}
		if f.Leaves {
			s.budget.suspend()
			if s.tail = s.returnsToCaller(); s.tail {
				// "return f(...)" from the callback itself: no script runs
				// after f, so its clock stays stopped until the callback
				// ends (no clock reading to restart it)
				defer s.budget.resumeToEnd()
			} else {
				defer s.budget.resume()
			}
		}
		n := f.Fn(s)
		if s.pending != nil {
			// a result converted for the script went over the data limits
			err := s.pendingError()
			L.RaiseCoded(LimitCode(err), "%s: %s", f.LuaName(), err.Error())
		}
		return n
	}
}

// ArgError raises "NAME: argument N: msg" at the script's position.
func (s *State) ArgError(name string, n int, format string, args ...any) {
	s.L.RaiseError("%s: argument %d: %s", name, n, fmt.Sprintf(format, args...))
}

// ArgErrorCoded is ArgError for a failure with a code (RaiseCoded).
func (s *State) ArgErrorCoded(code, name string, n int, format string, args ...any) {
	s.L.RaiseCoded(code, "%s: argument %d: %s", name, n, fmt.Sprintf(format, args...))
}

// CheckString returns argument n as a string or raises a clear error.
func (s *State) CheckString(name string, n int) string {
	v := s.L.Get(n)
	if str, ok := v.(lua.LString); ok {
		return string(str)
	}
	s.ArgError(name, n, "want a string, got %s", TypeName(v))
	return ""
}

// CheckFunction returns argument n as a function or raises.
func (s *State) CheckFunction(name string, n int) *lua.LFunction {
	v := s.L.Get(n)
	if fn, ok := v.(*lua.LFunction); ok {
		return fn
	}
	s.ArgError(name, n, "want a function, got %s", TypeName(v))
	return nil
}

// OptTable returns argument n as a table, nil when absent, or raises.
func (s *State) OptTable(name string, n int) *lua.LTable {
	v := s.L.Get(n)
	switch t := v.(type) {
	case *lua.LTable:
		return t
	case *lua.LNilType:
		return nil
	}
	s.ArgError(name, n, "want an options table, got %s", TypeName(v))
	return nil
}

// TypeName names a Lua value's type in the words of plain data.
func TypeName(v lua.LValue) string {
	switch t := v.(type) {
	case *lua.LNilType:
		return "nil"
	case lua.LBool:
		return "boolean"
	case lua.LNumber:
		return "number"
	case lua.LString:
		return "string"
	case *lua.LTable:
		if t.MaxN() > 0 {
			return "list"
		}
		return "table"
	case *lua.LFunction:
		return "function"
	}
	return v.Type().String()
}
