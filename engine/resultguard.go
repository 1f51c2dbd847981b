package engine

import (
	"fmt"

	lua "github.com/attune-dev/attune/internal/lua"

	"github.com/attune-dev/attune/luabind"
)

// Result guards (guard/result PATH (lambda (c outcome) ...)) judge a call's
// result after its core succeeded and before its :post hooks run, in
// reverse guard order (the guard nearest the core first), each seeing the
// outcome as the ones before it left it. A result guard returns the
// outcome unchanged (or anything else but these), (replace outcome
// NEW-RESULT) to rewrite or redact what the caller gets, or (refuse
// REASON) to withhold it: the call is refused by the guard, with no
// result. A guard that throws withholds the result too (a guard that
// cannot judge denies). :post hooks still cannot replace a result (R4.7);
// they see what the result guards left.

func fGuardResult(s *luabind.State) int {
	r := regOf(s)
	pat := s.CheckString("guard/result", 1)
	checkPattern(s, "guard/result", pat)
	fn := s.CheckFunction("guard/result", 2)
	o := s.OptTable("guard/result", 3)
	checkOptions(s, "guard/result", o)
	r.resultGuards = append(r.resultGuards, &guardDecl{decl: r.newDecl(), pattern: pat, fn: fn})
	return 0
}

// fReplace is (replace OUTCOME NEW-RESULT): a result guard's verdict that
// the caller gets NEW-RESULT instead.
func fReplace(s *luabind.State) int {
	r := regOf(s)
	if _, ok := s.L.Get(1).(*lua.LTable); !ok {
		s.ArgError("replace", 1, "want the outcome the result guard was given, got %s", luabind.TypeName(s.L.Get(1)))
	}
	t := s.L.CreateTable(0, 1)
	t.RawSetString("result", s.L.Get(2))
	t.Metatable = r.replaceMT
	s.L.Push(t)
	return 1
}

// results runs the result guards of a call whose core succeeded with out.
func (c *chain) results(args any, out Outcome) Outcome {
	gs := c.te.results
	for k := len(gs) - 1; k >= 0; k-- {
		g := gs[k]
		r := g.reg
		fr := c.frame(r, &g.decl)
		owned, err := r.lock(fr)
		if err != nil {
			return failedOut(r, err)
		}
		rec, orec := c.callRecord(r, args), outcomeRecord(r, out)
		err = r.run(fr, luabind.Callback, g.fn, 1, rec, orec)
		var ret lua.LValue = lua.LNil
		if err == nil {
			ret = r.st.L.Get(-1)
			r.st.L.Pop(1)
		}
		r.calls.Put(rec)
		r.outs.Put(orec)
		replaced, isReplace, refused, reason := false, false, false, ""
		var res any
		if t, ok := ret.(*lua.LTable); ok && err == nil {
			switch t.Metatable {
			case r.replaceMT:
				isReplace = true
				res, err = r.st.FromLua(t.RawGetString("result"))
				if err != nil {
					err = fmt.Errorf("result guard at %s: replace: the new result is not plain data: %v", g.pos, err)
				}
				replaced = err == nil
			case r.refuseMT, r.haltMT:
				refused = true
				if s, ok := t.RawGetString("reason").(lua.LString); ok {
					reason = string(s)
				}
			}
		}
		r.unlock(owned)
		switch {
		case err != nil:
			return failedOut(r, err)
		case refused:
			if reason == "" {
				reason = "result withheld by the result guard at " + g.pos
			}
			return Outcome{Status: StatusRefused, RefusedBy: ByGuard, Reason: reason, Verdict: out.Verdict, VerdictReason: out.VerdictReason}
		case replaced && isReplace:
			out.Result, out.Replaced = res, true
		}
	}
	return out
}
