package engine

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"unicode"

	lua "github.com/attune-dev/attune/internal/lua"
	luar "github.com/attune-dev/attune/internal/luar"

	"github.com/attune-dev/attune/luabind"
)

// HostLibrary exposes a host's Go value to behaviors under a namespace:
// every exported method of Value is NAME.method in Lua (the method's name
// with its first letter in lower case) and NAME/method in the forms, e.g.
// repo.branch() and (repo/branch). gopher-luar converts the script's
// arguments to the method's parameter types (a table to a struct, a map,
// a slice). The methods run in the callback ambient only. What a method
// returns crosses back as plain data (its JSON form; a trailing error
// return that is not nil raises a script error), and each call's answer is
// a delivery: journaled while a turn is open, and answered from the
// journal in a replay, which never calls the host.
type HostLibrary struct {
	Name  string
	Value any
}

// DeliveryLib is the journal's kind of a host library's answers.
const DeliveryLib = "lib"

// reserved are the engine's own namespaces and globals.
var reserved = map[string]bool{"define": true, "guard": true, "hook": true, "call": true, "admit": true, "read": true,
	"string": true, "table": true, "math": true, "os": true, "io": true, "coroutine": true, "debug": true, "package": true, "utf8": true}

// hostFuncs declares the script functions of the host's libraries.
func hostFuncs(libs []HostLibrary) ([]*luabind.Func, error) {
	var out []*luabind.Func
	seen := map[string]bool{}
	for _, l := range libs {
		if l.Name == "" || reserved[l.Name] || seen[l.Name] || strings.ContainsAny(l.Name, "./ ") {
			return nil, fmt.Errorf("engine: host library %q: a library needs a name of its own (not empty, not an engine namespace, no '.', '/' or spaces)", l.Name)
		}
		seen[l.Name] = true
		v := reflect.ValueOf(l.Value)
		if !v.IsValid() || v.NumMethod() == 0 {
			return nil, fmt.Errorf("engine: host library %s: %T has no exported methods", l.Name, l.Value)
		}
		for k := 0; k < v.NumMethod(); k++ {
			m := v.Type().Method(k)
			name := lowerFirst(m.Name)
			qualified := l.Name + "." + name
			method := v.Method(k)
			out = append(out, &luabind.Func{Name: l.Name + "/" + name, Ambients: luabind.Callback, Leaves: true,
				Fn: func(s *luabind.State) int { return callHost(s, qualified, method) }})
		}
	}
	return out, nil
}

func lowerFirst(s string) string {
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

var errorType = reflect.TypeOf((*error)(nil)).Elem()

// callHost runs one host library call from script: a delivery.
func callHost(s *luabind.State, qualified string, method reflect.Value) int {
	r := regOf(s)
	fr := r.top()
	fr.effect()
	L := s.L
	n := L.GetTop()
	for k := 1; k <= n; k++ {
		// gopher-luar copies a table argument into the method's parameter
		// type, a table reached from several places each time
		if err := luabind.CheckSize(L.Get(k), fmt.Sprintf("%s: argument %d", qualified, k)); err != nil {
			s.RaiseCoded(string(raiseCode("", err)), "%v", err)
		}
	}
	v, err := fr.inst.deliver(fr.ctx, DeliveryLib, qualified, func(context.Context) (res any, err error) {
		defer func() {
			if p := recover(); p != nil {
				res, err = nil, fmt.Errorf("%s panicked: %v", qualified, p)
			}
		}()
		top := L.GetTop()
		L.Push(luar.New(L, method.Interface()))
		for k := 1; k <= n; k++ {
			L.Push(L.Get(k))
		}
		if perr := L.PCall(n, lua.MultRet, nil); perr != nil {
			return nil, fmt.Errorf("%s: %v", qualified, perr)
		}
		var outs []any
		for k := top + 1; k <= L.GetTop(); k++ {
			lv := L.Get(k)
			if ud, ok := lv.(*lua.LUserData); ok {
				outs = append(outs, ud.Value)
			} else {
				x, cerr := s.FromLua(lv)
				if cerr != nil {
					return nil, cerr
				}
				outs = append(outs, x)
			}
		}
		L.SetTop(top)
		mt := method.Type()
		if mt.NumOut() > 0 && mt.Out(mt.NumOut()-1) == errorType {
			if e, _ := outs[len(outs)-1].(error); e != nil {
				return nil, fmt.Errorf("%s: %v", qualified, e)
			}
			outs = outs[:len(outs)-1]
		}
		switch len(outs) {
		case 0:
			return nil, nil
		case 1:
			return Plain(outs[0]), nil
		}
		return Plain(outs), nil
	})
	if err != nil {
		s.RaiseCoded(string(raiseCode("", err)), "%v", err)
	}
	L.Push(s.ToLua(Plain(v)))
	return 1
}
