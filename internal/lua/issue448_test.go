package lua

import "testing"

func TestIssue448(t *testing.T) {
	for name, src := range map[string]string{
		"pcall": `local a
			local function use() return a end
			pcall(function() error("x") end)
			a = 1
			assert(use() == 1)`,
		"xpcall leak": `local leaked
			xpcall(function() local x = 42; leaked = function() return x end; error("e") end, function(e) return e end)
			local a, b, c, d = 1, 2, 3, 4
			local function f(p, q, r) return p end
			f(9, 9, 9)
			assert(leaked() == 42, tostring(leaked()))`,
		"pcall leak": `local leaked
			pcall(function() local x = 42; leaked = function() return x end; error("e") end)
			local a, b, c, d = 1, 2, 3, 4
			local function f(p, q, r) return p end
			f(9, 9, 9)
			assert(leaked() == 42, tostring(leaked()))`,
		"coroutine": `local a = 0
			local get = function() return a end
			local co = coroutine.create(function() local y = 5; g = function() return y end; error("in co") end)
			assert(not coroutine.resume(co))
			a = 3
			assert(get() == 3 and g() == 5)`,
		"go nested": `local a = 0
			local get = function() return a end
			local ok = gocall(function() local z = 1; error("nested") end)
			assert(not ok)
			a = 9
			assert(get() == 9)`,
	} {
		L := NewState()
		L.SetGlobal("gocall", L.NewFunction(func(L *LState) int {
			L.Push(L.Get(1))
			err := L.PCall(0, 0, nil)
			L.Push(LBool(err == nil))
			return 1
		}))
		if err := L.DoString(src); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		L.Close()
	}
}
