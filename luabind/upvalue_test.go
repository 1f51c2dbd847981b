package luabind

import "testing"

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
