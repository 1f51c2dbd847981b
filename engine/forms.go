package engine

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	lua "github.com/attune-dev/attune/internal/lua"

	"github.com/attune-dev/attune/internal/tomlx"
	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/scheme"
)

// forms is every script-visible engine function, declared once as data
// (docs/forms.md). Ambients are enforced by luabind's choke point.
var forms = []*luabind.Func{
	// register forms (R1.1)
	{Name: "define/tool", Ambients: luabind.Register, Register: true, Fn: fDefineTool},
	{Name: "guard/tool", Ambients: luabind.Register, Register: true, Fn: fGuardTool},
	{Name: "guard/turn", Ambients: luabind.Register, Register: true, Fn: fGuardBoundary("turn")},
	{Name: "guard/round", Ambients: luabind.Register, Register: true, Fn: fGuardBoundary("round")},
	{Name: "guard/result", Ambients: luabind.Register, Register: true, Fn: fGuardResult},
	{Name: "hook/tool", Ambients: luabind.Register, Register: true, Fn: fHookTool},
	{Name: "hook/turn", Ambients: luabind.Register, Register: true, Fn: fHookBoundary("turn")},
	{Name: "hook/round", Ambients: luabind.Register, Register: true, Fn: fHookBoundary("round")},
	{Name: "hook/session", Ambients: luabind.Register, Register: true, Fn: fHookBoundary("session")},
	{Name: "define/reducer", Ambients: luabind.Register, Register: true, Fn: fDefineReducer},
	{Name: "define/method", Ambients: luabind.Register, Register: true, Fn: fDefineMethod},
	{Name: "define/command", Ambients: luabind.Register, Register: true, Fn: fDefineCommand},
	{Name: "subscribe", Ambients: luabind.Register, Register: true, Fn: fSubscribe},
	{Name: "require", Ambients: luabind.Register, Register: true, Fn: fRequire},
	{Name: "validate/configuration", Ambients: luabind.Register, Register: true, Fn: fValidate},
	// everywhere
	{Name: "config", Ambients: luabind.AnyAmbient, Fn: fConfig},
	{Name: "list", Ambients: luabind.AnyAmbient, Fn: fList},
	{Name: "read/forms", Ambients: luabind.AnyAmbient, Fn: fReadForms},
	{Name: "log", Ambients: luabind.AnyAmbient, Fn: fLog},
	// callback functions
	{Name: "call/method", Ambients: luabind.Callback, Leaves: true, Fn: needsSession("call/method", fCallMethod)},
	{Name: "call/tool", Ambients: luabind.Callback, Leaves: true, Fn: needsSession("call/tool", fCallTool)},
	{Name: "notify", Ambients: luabind.Callback, Fn: needsSession("notify", fNotify)},
	{Name: "propose", Ambients: luabind.Callback, Fn: needsSession("propose", fPropose)},
	{Name: "admit/read", Ambients: luabind.Callback, Leaves: true, Fn: needsSession("admit/read", fAdmitRead)},
	{Name: "refuse", Ambients: luabind.Callback, Fn: fRefuse},
	{Name: "retry", Ambients: luabind.Callback, Fn: fRetry},
	{Name: "replace", Ambients: luabind.Callback, Fn: fReplace},
	{Name: "allow", Ambients: luabind.Callback, Fn: fAllow},
	{Name: "ask", Ambients: luabind.Callback, Fn: fAsk},
	{Name: "halt", Ambients: luabind.Callback, Fn: needsSession("halt", fHalt)},
	{Name: "mark", Ambients: luabind.Callback, Fn: fMark},
	{Name: "unmark", Ambients: luabind.Callback, Fn: fUnmark},
}

// needsSession refuses fn while a validate/configuration handler runs: the
// instance has no session yet, so the function throws the ambient error and
// the load fails at the handler's line (R1.8, R1.12).
func needsSession(name string, fn func(*luabind.State) int) func(*luabind.State) int {
	return func(s *luabind.State) int {
		if fr := regOf(s).top(); fr == nil || fr.validating {
			s.L.RaiseError("%s is not available in validate/configuration (the configuration is checked before the instance has a session)", name)
		}
		return fn(s)
	}
}

// invokeFunc is the single-use invoke handed to guards.
var invokeFunc = &luabind.Func{Name: "invoke", Ambients: luabind.Callback, Leaves: true, Fn: fInvoke}

// formsLib is the forms and invoke as one library shared by every registry
// (built once; immutable).
var formsLib = sync.OnceValue(func() *luabind.Library {
	lib := luabind.NewLibrary(append(append([]*luabind.Func(nil), forms...), invokeFunc))
	lib.Hints = scheme.FormNames()
	return lib
})

func regOf(s *luabind.State) *registry { return s.Owner.(*registry) }

func (r *registry) newDecl() decl {
	r.decls++
	return decl{id: r.id + "." + strconv.Itoa(r.decls), reg: r, pos: r.position()}
}

// checkOptions refuses a key of an options table the form does not know:
// a misspelled :post-fail or :scope would otherwise be dropped without a
// word (and the hook never run, the owner kept in another scope).
func checkOptions(s *luabind.State, form string, t *lua.LTable, known ...string) {
	if t == nil {
		return
	}
	t.ForEach(func(k, _ lua.LValue) {
		ks, ok := k.(lua.LString)
		if ok && slices.Contains(known, string(ks)) {
			return
		}
		s.L.RaiseError("%s: unknown option %s (its options are %s)%s",
			form, lua.LVAsString(k), strings.Join(known, ", "), tomlx.Suggest(lua.LVAsString(k), known))
	})
}

// opt reads options-table field key (nil when the table is absent).
func opt(t *lua.LTable, key string) lua.LValue {
	if t == nil {
		return lua.LNil
	}
	return t.RawGetString(key)
}

func optFunc(s *luabind.State, form string, t *lua.LTable, key string) *lua.LFunction {
	switch v := opt(t, key).(type) {
	case *lua.LNilType:
		return nil
	case *lua.LFunction:
		return v
	default:
		s.L.RaiseError("%s: option %s: want a function, got %s", form, key, luabind.TypeName(v))
	}
	return nil
}

func optInt(s *luabind.State, form string, t *lua.LTable, key string, def int) int {
	switch v := opt(t, key).(type) {
	case *lua.LNilType:
		return def
	case lua.LNumber:
		if float64(v) != float64(int(v)) || v < 0 {
			s.L.RaiseError("%s: option %s: want a whole number >= 0, got %v", form, key, v)
		}
		return int(v)
	default:
		s.L.RaiseError("%s: option %s: want a number, got %s", form, key, luabind.TypeName(v))
	}
	return def
}

func optString(s *luabind.State, form string, t *lua.LTable, key, def string) string {
	switch v := opt(t, key).(type) {
	case *lua.LNilType:
		return def
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return v.String()
	default:
		s.L.RaiseError("%s: option %s: want a string, got %s", form, key, luabind.TypeName(v))
	}
	return def
}

// optStrings reads a list of strings (a single string counts as one).
func optStrings(s *luabind.State, form string, t *lua.LTable, key string) []string {
	switch v := opt(t, key).(type) {
	case *lua.LNilType:
		return nil
	case lua.LString:
		return []string{string(v)}
	case *lua.LTable:
		var out []string
		for i := 1; i <= v.Len(); i++ {
			str, ok := v.RawGetInt(i).(lua.LString)
			if !ok {
				s.L.RaiseError("%s: option %s[%d]: want a string, got %s", form, key, i, luabind.TypeName(v.RawGetInt(i)))
			}
			out = append(out, string(str))
		}
		return out
	default:
		s.L.RaiseError("%s: option %s: want a list of strings, got %s", form, key, luabind.TypeName(v))
	}
	return nil
}

func optSchema(s *luabind.State, form string, t *lua.LTable, key string) schema {
	v := opt(t, key)
	if v == lua.LNil {
		return nil
	}
	sc, err := parseSchema(s, v)
	if err != nil {
		s.L.RaiseError("%s: option %s: %v", form, key, err)
	}
	return sc
}

func fDefineTool(s *luabind.State) int {
	r := regOf(s)
	path := s.CheckString("define/tool", 1)
	fn := s.CheckFunction("define/tool", 2)
	o := s.OptTable("define/tool", 3)
	checkOptions(s, "define/tool", o, "effect", "effects", "input", "output")
	d := &toolDecl{decl: r.newDecl(), path: path, fn: fn,
		effects: optStrings(s, "define/tool", o, "effect"),
		input:   optSchema(s, "define/tool", o, "input"),
		output:  optSchema(s, "define/tool", o, "output")}
	if d.effects == nil {
		d.effects = optStrings(s, "define/tool", o, "effects")
	}
	r.tools = append(r.tools, d)
	return 0
}

func fGuardTool(s *luabind.State) int {
	r := regOf(s)
	pat := s.CheckString("guard/tool", 1)
	checkPattern(s, "guard/tool", pat)
	fn := s.CheckFunction("guard/tool", 2)
	o := s.OptTable("guard/tool", 3)
	checkOptions(s, "guard/tool", o, "reentrant_depth")
	r.toolGuards = append(r.toolGuards, &guardDecl{decl: r.newDecl(), pattern: pat, fn: fn,
		depth: optInt(s, "guard/tool", o, "reentrant_depth", 0)})
	return 0
}

func fGuardBoundary(kind string) func(*luabind.State) int {
	form := "guard/" + kind
	return func(s *luabind.State) int {
		r := regOf(s)
		fn := s.CheckFunction(form, 1)
		if r.bguards == nil {
			r.bguards = map[string][]*guardDecl{}
		}
		r.bguards[kind] = append(r.bguards[kind], &guardDecl{decl: r.newDecl(), fn: fn})
		return 0
	}
}

func fHookTool(s *luabind.State) int {
	r := regOf(s)
	pat := s.CheckString("hook/tool", 1)
	checkPattern(s, "hook/tool", pat)
	o := s.OptTable("hook/tool", 2)
	checkOptions(s, "hook/tool", o, "pre", "post", "post_fail", "reentrant_depth")
	h := &hookDecl{decl: r.newDecl(), pattern: pat,
		pre:      optFunc(s, "hook/tool", o, "pre"),
		post:     optFunc(s, "hook/tool", o, "post"),
		postFail: optFunc(s, "hook/tool", o, "post_fail"),
		depth:    optInt(s, "hook/tool", o, "reentrant_depth", 0)}
	if h.pre == nil && h.post == nil && h.postFail == nil {
		s.L.RaiseError("hook/tool: give at least one of :pre, :post, :post-fail")
	}
	r.toolHooks = append(r.toolHooks, h)
	return 0
}

func fHookBoundary(kind string) func(*luabind.State) int {
	form := "hook/" + kind
	return func(s *luabind.State) int {
		r := regOf(s)
		phase := s.CheckString(form, 1)
		if phase != "start" && phase != "end" {
			s.ArgError(form, 1, "phase must be \"start\" or \"end\", got %q", phase)
		}
		fn := s.CheckFunction(form, 2)
		o := s.OptTable(form, 3)
		checkOptions(s, form, o, "post_fail")
		r.bhooks = append(r.bhooks, &hookDecl{decl: r.newDecl(), phase: phase, boundary: kind + "/" + phase,
			fn: fn, postFail: optFunc(s, form, o, "post_fail")})
		return 0
	}
}

func fSubscribe(s *luabind.State) int {
	r := regOf(s)
	owner := s.CheckString("subscribe", 1)
	fn := s.CheckFunction("subscribe", 2)
	r.subs = append(r.subs, &subDecl{decl: r.newDecl(), owner: owner, fn: fn})
	return 0
}

func fRequire(s *luabind.State) int {
	r := regOf(s)
	r.requires = append(r.requires, s.CheckString("require", 1))
	return 0
}

func fValidate(s *luabind.State) int {
	r := regOf(s)
	r.validators = append(r.validators, s.CheckFunction("validate/configuration", 1))
	r.vpos = append(r.vpos, r.position())
	return 0
}

func fConfig(s *luabind.State) int {
	r := regOf(s)
	if s.L.GetTop() == 0 {
		s.L.Push(s.Copy(r.cfgLua))
		return 1
	}
	key := s.CheckString("config", 1)
	s.L.Push(s.Copy(r.cfgLua.(*lua.LTable).RawGetString(key)))
	return 1
}

func fList(s *luabind.State) int {
	t := s.NewList()
	for i := 1; i <= s.L.GetTop(); i++ {
		t.Append(s.L.Get(i))
	}
	s.L.Push(t)
	return 1
}

// checkPattern validates a tool pattern: exact, prefix/* or prefix/**.
func checkPattern(s *luabind.State, form, pat string) {
	if pat == "" {
		s.ArgError(form, 1, "empty pattern")
	}
	for i := 0; i < len(pat); i++ {
		if pat[i] == '*' {
			rest := pat[i:]
			if (rest != "*" && rest != "**") || (i > 0 && pat[i-1] != '/') {
				s.ArgError(form, 1, "pattern %q: a * may only end a pattern as /* or /**", pat)
			}
			break
		}
	}
}

// match reports whether a tool path matches a pattern (R4.2): exact path,
// prefix/* (exactly one more segment), prefix/** (one or more).
func match(pattern, path string) bool {
	switch {
	case len(pattern) >= 3 && pattern[len(pattern)-3:] == "/**":
		prefix := pattern[:len(pattern)-2]
		return len(path) > len(prefix) && path[:len(prefix)] == prefix
	case len(pattern) >= 2 && pattern[len(pattern)-2:] == "/*":
		prefix := pattern[:len(pattern)-1]
		if len(path) <= len(prefix) || path[:len(prefix)] != prefix {
			return false
		}
		for i := len(prefix); i < len(path); i++ {
			if path[i] == '/' {
				return false
			}
		}
		return true
	case pattern == "*":
		for i := 0; i < len(path); i++ {
			if path[i] == '/' {
				return false
			}
		}
		return true
	case pattern == "**":
		return true
	}
	return pattern == path
}
