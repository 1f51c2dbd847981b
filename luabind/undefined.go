package luabind

import (
	"sort"
	"strconv"
	"strings"

	lua "github.com/attune-dev/attune/internal/lua"
	"github.com/attune-dev/attune/internal/tomlx"
)

// UndefinedCall is a call a script made of something that is no function:
// a misspelled form (hook/tol), a misspelled function (refuze), a name of
// the forms without its mark (put for put!). The fields come from the
// VM (lua.CallFault), never from the message.
type UndefinedCall struct {
	// Name is the callee as the program spells it: "refuze" in Lua,
	// "hook/tol" in a .scm program.
	Name string
	// Kind is "global", "local", "upvalue" (what its first name is) or
	// "method".
	Kind string
	// Type is what was found there: "nil", "number", ...
	Type string
	// Suggestion is the nearest name the program could have meant, in its
	// own spelling; "" when none is close.
	Suggestion string
}

// message is the error text of the call: its position, what was called
// and what was found, and the nearest name.
func (u *UndefinedCall) message(f *lua.CallFault) string {
	var b strings.Builder
	b.WriteString(f.Where)
	b.WriteByte(' ')
	if isForms(f.Source) {
		b.WriteString(u.Name)
		if u.Type == "nil" {
			b.WriteString(" is not a form or function (it is not defined)")
		} else {
			b.WriteString(" is not a function (it is a " + u.Type + ")")
		}
	} else {
		what := u.Kind
		if u.Kind != "method" && strings.Contains(u.Name, ".") {
			what = "field"
		}
		b.WriteString("attempt to call " + what + " '" + u.Name + "' (a " + u.Type + " value)")
	}
	if u.Suggestion != "" {
		b.WriteString("; did you mean " + strconv.Quote(u.Suggestion) + "?")
	}
	return b.String()
}

// isForms reports whether a chunk was lowered from the forms.
func isForms(source string) bool { return strings.HasSuffix(source, ".scm") }

// undefined describes the call f, with the nearest defined name.
func (s *State) undefined(f *lua.CallFault) *UndefinedCall {
	u := &UndefinedCall{Name: f.Callee, Kind: f.Kind, Type: f.Type}
	if f.Kind == "local" || f.Kind == "upvalue" || f.Kind == "method" {
		return u // the name is the program's own: nothing to suggest
	}
	forms := isForms(f.Source)
	if forms {
		u.Name = formsSpelling(f.Callee)
	}
	u.Suggestion = strings.TrimSuffix(strings.TrimPrefix(tomlx.Suggest(u.Name, s.knownNames(forms)), `; did you mean "`), `"?`)
	return u
}

// knownNames are the names a call may mean, in the program's spelling:
// the engine's forms and functions, the sandbox's, the script's own
// globals (and their fields one level down).
func (s *State) knownNames(forms bool) []string {
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if forms {
			n = formsSpelling(n)
		}
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	if s.lib != nil {
		for f := range s.lib.funcs {
			if forms {
				add(strings.ReplaceAll(f.Name, "/", "."))
			} else {
				add(f.LuaName())
			}
		}
		if forms {
			for _, h := range s.lib.Hints {
				if !seen[h] {
					seen[h] = true
					out = append(out, h)
				}
			}
		}
	}
	for _, n := range shared().names {
		add(n)
	}
	s.L.G.Global.ForEach(func(k, v lua.LValue) {
		ks, ok := k.(lua.LString)
		if !ok || ks == "_G" {
			return
		}
		switch t := v.(type) {
		case *lua.LFunction:
			add(string(ks))
		case *lua.LTable:
			t.ForEach(func(k2, v2 lua.LValue) {
				if k2s, ok := k2.(lua.LString); ok {
					if _, fn := v2.(*lua.LFunction); fn {
						add(string(ks) + "." + string(k2s))
					}
				}
			})
		}
	})
	sort.Strings(out)
	return out
}

// formsSpelling spells a Lua name as the forms write it, undoing the
// lowering's mangling: "hook.tol" is hook/tol, "put_x" put!, "null_p"
// null?, "task_id" task-id.
func formsSpelling(name string) string {
	segs := strings.Split(name, ".")
	for k, seg := range segs {
		switch {
		case strings.HasSuffix(seg, "_x"):
			seg = strings.TrimSuffix(seg, "_x") + "!"
		case strings.HasSuffix(seg, "_p"):
			seg = strings.TrimSuffix(seg, "_p") + "?"
		}
		segs[k] = strings.ReplaceAll(seg, "_", "-")
	}
	return strings.Join(segs, "/")
}
