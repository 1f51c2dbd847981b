package lua

import (
	"math/rand"
	"testing"
)

// attune: a small table (string keys in a list, no map) answers every
// read and traversal exactly as a table whose hash part is a map, through
// any sequence of sets, deletions, non-string keys and growth past
// smallKeys.
func TestSmallTableMatchesMapTable(t *testing.T) {
	names := []string{"a", "b", "c", "path", "args", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "long key"}
	others := []LValue{LNumber(1.5), LNumber(-3), LTrue, LNumber(1e9)}
	vals := []LValue{LNil, LTrue, LFalse, LNumber(7), LString("v")}
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 3000; round++ {
		tabs := []*LTable{newLTable(0, 0), newLTable(0, 4), newLTable(2, 8), newLTable(0, 32)}
		nops := 1 + rng.Intn(30)
		var log []string
		for op := 0; op < nops; op++ {
			v := vals[rng.Intn(len(vals))]
			switch r := rng.Intn(10); {
			case r < 7:
				k := names[rng.Intn(len(names))]
				log = append(log, "set "+k+"="+v.String())
				for _, tb := range tabs {
					tb.RawSetString(k, v)
				}
			case r < 8:
				k := others[rng.Intn(len(others))]
				log = append(log, "setH "+k.String()+"="+v.String())
				for _, tb := range tabs {
					tb.RawSetH(k, v)
				}
			case r < 9:
				k := LString(names[rng.Intn(len(names))])
				log = append(log, "RawSet "+string(k)+"="+v.String())
				for _, tb := range tabs {
					tb.RawSet(k, v)
				}
			default:
				i := 1 + rng.Intn(3)
				log = append(log, "setInt")
				for _, tb := range tabs {
					tb.RawSetInt(i, v)
				}
			}
		}
		ref := tabs[len(tabs)-1]
		for ti, tb := range tabs[:len(tabs)-1] {
			for _, k := range names {
				if a, b := tb.RawGetString(k), ref.RawGetString(k); a != b {
					t.Fatalf("round %d table %d: %q = %v, want %v after %v", round, ti, k, a, b, log)
				}
				if a, b := tb.RawGet(LString(k)), ref.RawGetH(LString(k)); a != b {
					t.Fatalf("round %d table %d: RawGet %q = %v, want %v", round, ti, k, a, b)
				}
			}
			for _, k := range others {
				if a, b := tb.RawGetH(k), ref.RawGetH(k); a != b {
					t.Fatalf("round %d table %d: %v = %v, want %v", round, ti, k, a, b)
				}
			}
			ka, kb := LValue(LNil), LValue(LNil)
			for n := 0; ; n++ {
				var va, vb LValue
				ka, va = tb.Next(ka)
				kb, vb = ref.Next(kb)
				if ka != kb || va != vb {
					t.Fatalf("round %d table %d: Next #%d = %v, %v, want %v, %v after %v", round, ti, n, ka, va, kb, vb, log)
				}
				if ka == LNil {
					if tb.Count() != n || ref.Count() != n {
						t.Fatalf("round %d table %d: Count = %d (map-backed %d), Next visited %d after %v", round, ti, tb.Count(), ref.Count(), n, log)
					}
					break
				}
			}
			seen := map[LValue]LValue{}
			tb.ForEach(func(k, v LValue) { seen[k] = v })
			want := map[LValue]LValue{}
			ref.ForEach(func(k, v LValue) { want[k] = v })
			if len(seen) != len(want) {
				t.Fatalf("round %d table %d: ForEach saw %v, want %v", round, ti, seen, want)
			}
			for k, v := range want {
				if seen[k] != v {
					t.Fatalf("round %d table %d: ForEach saw %v, want %v", round, ti, seen, want)
				}
			}
		}
	}
}

// attune: a small table is read and updated without a map and without
// allocating; a 4-key one is made with three allocations (the table, its
// key and value lists, one boxed key each: see the presize test).
func TestSmallTableUpdatesWithoutAllocating(t *testing.T) {
	tb := newLTable(0, 6)
	for _, k := range []string{"args", "attempt", "call_id", "instance", "marks", "path"} {
		tb.RawSetString(k, LFalse)
	}
	var v LValue = LString("x")
	allocs := testing.AllocsPerRun(200, func() {
		tb.RawSetString("path", v)
		tb.RawSetString("args", LNil)
		tb.RawSetString("args", v)
		if tb.RawGetString("path") != v || tb.RawGetString("nope") != LNil {
			t.Fatal("wrong value")
		}
	})
	if allocs != 0 || tb.strdict != nil {
		t.Fatalf("updating a small table: %v allocations, map %v", allocs, tb.strdict != nil)
	}
}

// attune: RawSetStringAt stores at a key's place when the key is there, and
// is RawSetString otherwise (a wrong place, a key not yet set, a map-backed
// table).
func TestRawSetStringAt(t *testing.T) {
	tb := newLTable(0, 2)
	tb.RawSetString("a", LTrue)
	tb.RawSetString("b", LTrue)
	tb.RawSetStringAt(1, "b", LNumber(2))
	tb.RawSetStringAt(0, "b", LNumber(3)) // not at 0: looked up
	tb.RawSetStringAt(2, "c", LNumber(4)) // new
	if tb.RawGetString("a") != LTrue || tb.RawGetString("b") != LNumber(3) || tb.RawGetString("c") != LNumber(4) {
		t.Fatalf("a, b, c = %v, %v, %v", tb.RawGetString("a"), tb.RawGetString("b"), tb.RawGetString("c"))
	}
	big := newLTable(0, 32)
	big.RawSetString("a", LTrue)
	big.RawSetStringAt(0, "a", LFalse)
	if big.RawGetString("a") != LFalse {
		t.Fatal("RawSetStringAt on a map-backed table did not set")
	}
}
