package lua

import "testing"

// attune: a table created with hcap string slots is filled with that many
// keys without growing its key list or index, each key boxed once.
func TestPresizedTableFillsWithoutGrowing(t *testing.T) {
	keys := []string{"path", "offset", "limit", "follow"}
	allocs := testing.AllocsPerRun(200, func() {
		tb := newLTable(0, len(keys))
		for _, k := range keys {
			tb.RawSetString(k, LTrue)
		}
	})
	// the table, its hash part (a map: 2), key list and index (2), one
	// boxed key each; the release made 15 (key list and index grown, each
	// key boxed twice)
	if want := float64(5 + len(keys)); allocs > want {
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
