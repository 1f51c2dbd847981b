package lua

import "testing"

// attune: a Go function learns whether a "return f(...)" of the function
// called from Go called it: then its results are that function's results.
func TestTailCalledFrom(t *testing.T) {
	L := NewState()
	defer L.Close()
	var base, at int
	var tail bool
	L.SetGlobal("probe", L.NewFunction(func(L *LState) int {
		at, tail = L.TailCalledFrom()
		L.Push(LTrue)
		return 1
	}))
	for _, c := range []struct {
		code string
		tail bool
	}{
		{"return function() return probe() end", true},
		{"return function(x) return probe(x, 1) end", true},
		{"return function() local v = probe() return v end", false},
		{"return function() probe() end", false},
		{"return function() return (probe()) end", false},
		{"return function() return pcall(probe) end", false},
		{"return function() local function h() return probe() end return h() end", true}, // tail calls all the way
		{"return function() local function h() return probe() end local v = h() return v end", false},
	} {
		if err := L.DoString(c.code); err != nil {
			t.Fatal(err)
		}
		fn := L.Get(-1)
		L.Pop(1)
		base = L.CallStackDepth()
		tail = false
		if err := L.CallByParam(P{Fn: fn, NRet: 1, Protect: true}); err != nil {
			t.Fatal(err)
		}
		L.Pop(1)
		got := tail && at == base
		if got != c.tail {
			t.Errorf("%s: returned to the Go caller = %v (tail %v, frame %d, base %d), want %v", c.code, got, tail, at, base, c.tail)
		}
	}
}
