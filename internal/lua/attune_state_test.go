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

// attune: StringValue and NumberValue give the values LString and LNumber
// give, equal to them, without an allocation each; a block outlives the
// state's next ones while a value of it lives.
func TestStringAndNumberValues(t *testing.T) {
	L := NewState()
	defer L.Close()
	var keep []LValue
	for i := 0; i < 3*stringBlock; i++ {
		s := string(rune('a'+i%26)) + "-" + string(rune('A'+i/26))
		v := L.StringValue(s)
		if v != LString(s) || v.String() != s || v.Type() != LTString {
			t.Fatalf("StringValue(%q) = %v", s, v)
		}
		keep = append(keep, v)
	}
	for i, v := range keep {
		s := string(rune('a'+i%26)) + "-" + string(rune('A'+i/26))
		if string(v.(LString)) != s {
			t.Fatalf("value %d changed to %q, want %q", i, v, s)
		}
	}
	long := string(make([]byte, maxBlockString+1))
	if L.StringValue(long) != LString(long) || L.StringValue("") != LString("") {
		t.Fatal("long or empty string")
	}
	if L.NumberValue(200) != LNumber(200) || L.NumberValue(0.5) != LNumber(0.5) {
		t.Fatal("NumberValue")
	}
	allocs := testing.AllocsPerRun(1000, func() { L.StringValue("/src/main.go"); L.NumberValue(200.5) })
	if allocs > 0.2 {
		t.Fatalf("%v allocations per string and number boxed", allocs)
	}
}

// attune: a lazy field is made on its first read, by whichever reader
// comes first, once; no reader gets the LLazy; PeekAt sees it until then.
func TestLazyField(t *testing.T) {
	L := NewState()
	defer L.Close()
	made := 0
	mk := func(l *LLazy) LValue { made++; return LString(l.Arg.(string)) }
	for _, read := range []struct {
		name string
		fn   func(tb *LTable) LValue
	}{
		{"RawGetString", func(tb *LTable) LValue { return tb.RawGetString("args") }},
		{"RawGet", func(tb *LTable) LValue { return tb.RawGet(LString("args")) }},
		{"Next", func(tb *LTable) LValue { _, v := tb.Next(LNil); return v }},
		{"ForEach", func(tb *LTable) LValue {
			var got LValue
			tb.ForEach(func(k, v LValue) {
				if k == LString("args") {
					got = v
				}
			})
			return got
		}},
		{"script", func(tb *LTable) LValue {
			L.SetGlobal("rec", tb)
			if err := L.DoString(`got = rec.args`); err != nil {
				t.Fatal(err)
			}
			return L.GetGlobal("got")
		}},
		{"pairs", func(tb *LTable) LValue {
			L.SetGlobal("rec", tb)
			if err := L.DoString(`for k, v in pairs(rec) do if k == "args" then got = v end end`); err != nil {
				t.Fatal(err)
			}
			return L.GetGlobal("got")
		}},
		{"migrated", func(tb *LTable) LValue { tb.RawSetH(LNumber(1.5), LTrue); return tb.RawGetString("args") }},
	} {
		made = 0
		tb := newLTable(0, 2)
		tb.RawSetString("args", LFalse)
		tb.RawSetString("path", LTrue)
		l := NewLazy(mk, "x", nil)
		if !tb.SetLazyAt(0, "args", l) || tb.SetLazyAt(1, "args", l) {
			t.Fatal("SetLazyAt")
		}
		if tb.PeekAt(0, "args") != l || l.Made() != nil || made != 0 {
			t.Fatalf("%s: made before read", read.name)
		}
		if v := read.fn(tb); v != LString("x") {
			t.Fatalf("%s: read %v", read.name, v)
		}
		if v := read.fn(tb); v != LString("x") || made != 1 || l.Made() != LString("x") || tb.PeekAt(0, "args") != LString("x") {
			t.Fatalf("%s: second read %v, made %d times", read.name, v, made)
		}
	}
}
