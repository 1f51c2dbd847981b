package lua

import "testing"

// attune: a table created with hcap string slots is filled with that many
// keys without growing its key list, with no index, each key boxed once.
func TestPresizedTableFillsWithoutGrowing(t *testing.T) {
	keys := []string{"path", "offset", "limit", "follow"}
	allocs := testing.AllocsPerRun(200, func() {
		tb := newLTable(0, len(keys))
		for _, k := range keys {
			tb.RawSetString(k, LTrue)
		}
	})
	// the table, its key and value lists (one allocation: a small table
	// has no map), one boxed key each; the release made 15 (key list and
	// index grown, each key boxed twice)
	if want := float64(2 + len(keys)); allocs > want {
		t.Fatalf("filling a presized 4-key table: %v allocations, want <= %v", allocs, want)
	}
	// pairs order stays the order the keys were set
	tb := newLTable(0, len(keys))
	for _, k := range keys {
		tb.RawSetString(k, LTrue)
	}
	var got []string
	for k, _ := tb.Next(LNil); k != LNil; k, _ = tb.Next(k) {
		got = append(got, string(k.(LString)))
	}
	if len(got) != len(keys) {
		t.Fatalf("Next visited %v, want %v", got, keys)
	}
	for i := range keys {
		if got[i] != keys[i] {
			t.Fatalf("Next visited %v, want %v", got, keys)
		}
	}
	// an empty presized table has no next key
	if k, _ := newLTable(0, 4).Next(LNil); k != LNil {
		t.Fatalf("empty presized table: Next = %v", k)
	}
}

// attune: small tables find a key's place by scanning keys; past smallKeys
// they index it. Either way Next visits every key once, in the order set,
// a deleted and re-set key keeps its place, and updating a string field
// allocates nothing.
func TestTableKeyOrderSmallAndIndexed(t *testing.T) {
	for _, n := range []int{3, smallKeys, smallKeys + 1, 40} {
		tb := newLTable(0, 0)
		var want []LValue
		for k := 0; k < n; k++ {
			var key LValue = LString(string(rune('a'+k%26)) + string(rune('A'+k/26)))
			if k%3 == 1 {
				key = LNumber(float64(k) + 0.5) // a non-string key goes through dict
			}
			tb.RawSetH(key, LNumber(k))
			want = append(want, key)
		}
		tb.RawSetH(want[0], LNil)  // deleted ...
		tb.RawSetH(want[0], LTrue) // ... and set again: same place, listed once
		tb.RawSetString(string(want[2].(LString)), LFalse)
		var got []LValue
		for k, _ := tb.Next(LNil); k != LNil; k, _ = tb.Next(k) {
			got = append(got, k)
		}
		if len(got) != len(want) {
			t.Fatalf("%d keys: Next visited %v, want %v", n, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%d keys: Next visited %v, want %v", n, got, want)
			}
		}
		if allocs := testing.AllocsPerRun(100, func() { tb.RawSetString("aA", LTrue) }); allocs != 0 {
			t.Fatalf("%d keys: updating a field made %v allocations", n, allocs)
		}
	}
}
