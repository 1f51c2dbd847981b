package luabind

import (
	"testing"

	lua "github.com/attune-dev/attune/internal/lua"
)

// gopher-lua #448: an error caught by pcall closed the upvalues of every
// frame on the stack, so a local and the closures sharing it went separate
// ways (the closure kept the old value).
func TestCaughtErrorKeepsUpvaluesShared(t *testing.T) {
	s := NewState(Options{})
	defer s.Close()
	for name, src := range map[string]string{
		"issue 448": `
			local a
			local function use() return a end
			pcall(function() error("an error") end)
			a = 1
			assert(use() == 1, "the closure does not see the local's new value")`,
		"counter": `
			local n = 0
			local function bump() n = n + 1 end
			bump()
			local ok = pcall(function() local x = nil; return x.y end)
			assert(not ok)
			bump()
			n = n + 10
			bump()
			assert(n == 13, "n is " .. n)`,
		"xpcall": `
			local v = "old"
			local get = function() return v end
			xpcall(function() error({}) end, function(e) return e end)
			v = "new"
			assert(get() == "new")`,
		"nested pcall": `
			local v = 0
			local get = function() return v end
			pcall(function()
				local w = 0
				local getw = function() return w end
				pcall(error, "inner")
				w = 5
				assert(getw() == 5, "inner frame split")
				error("outer")
			end)
			v = 7
			assert(get() == 7)`,
		"closure made in a failed call": `
			local leaked
			pcall(function() local x = 42; leaked = function() return x end; error("e") end)
			local a, b, c, d = 1, 2, 3, 4
			local function f(p, q, r) return p end
			f(9, 9, 9)
			assert(leaked() == 42, "leaked closure sees " .. tostring(leaked()))`,
		"closure made in a failed xpcall": `
			local leaked
			xpcall(function() local x = 42; leaked = function() return x end; error("e") end, function(e) return e end)
			local a, b, c, d = 1, 2, 3, 4
			local function f(p, q, r) return p end
			f(9, 9, 9)
			assert(leaked() == 42, "leaked closure sees " .. tostring(leaked()))`,
		"results and errors": `
			local ok, a, b = pcall(function(x, y) return x + y, "two" end, 1, 2)
			assert(ok == true and a == 3 and b == "two")
			local ok2, e = pcall(error, {code = 7})
			assert(ok2 == false and e.code == 7)
			local ok3, e3 = pcall(error, "msg", 0)
			assert(ok3 == false and e3 == "msg", tostring(e3))
			local ok4, e4 = xpcall(function() error("boom") end, function(m) return "handled: " .. m end)
			assert(ok4 == false and e4:find("handled: ") == 1, e4)
			assert(select("#", pcall(function() end)) == 1)
			local ok5, e5 = pcall(nil)
			assert(ok5 == false, "pcall(nil)")`,
	} {
		if err := run(t, s, Callback, src); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// gopher-lua #448 through the engine's own re-entry: a library function
// runs a nested callback in the same state (as call.tool reaching the next
// guard of the same program does) and that callback fails. The waiting
// callback's local and its closure must stay shared, and a closure made in
// the failed callback keeps the value it captured.
func TestNestedCallbackErrorKeepsUpvaluesShared(t *testing.T) {
	s := NewState(Options{})
	defer s.Close()
	s.Open(NewLibrary([]*Func{{Name: "call/nested", Ambients: Callback, Leaves: true, Fn: func(s *State) int {
		fn := s.CheckFunction("call.nested", 1)
		err := s.Call(Callback, fn, 0)
		s.L.Push(lua.LBool(err == nil))
		return 1
	}}}))
	for name, src := range map[string]string{
		"waiting callback": `
			local a = 0
			local function get() return a end
			assert(call.nested(function() local z = 1; error("nested fails") end) == false)
			a = 9
			assert(get() == 9, "the closure sees " .. get())`,
		"runtime error in the nested callback": `
			local n = 1
			local bump = function() n = n + 1 end
			assert(call.nested(function() local t = nil; return t.x end) == false)
			bump()
			assert(n == 2, "n is " .. n)`,
		"closure made in the failed callback": `
			local leaked
			assert(call.nested(function() local x = 42; leaked = function() return x end; error("e") end) == false)
			local a, b, c, d = 1, 2, 3, 4
			local function f(p, q, r) return p end
			f(9, 9, 9)
			assert(leaked() == 42, "leaked closure sees " .. tostring(leaked()))`,
		"nested inside pcall": `
			local v = "old"
			local get = function() return v end
			pcall(function()
				local w = 1
				local getw = function() return w end
				call.nested(function() error("inner") end)
				w = 2
				assert(getw() == 2, "split inside pcall")
			end)
			v = "new"
			assert(get() == "new")`,
	} {
		if err := run(t, s, Callback, src); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
