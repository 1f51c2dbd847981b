package luabind

import (
	"fmt"
	"slices"
	"testing"

	lua "github.com/attune-dev/attune/internal/lua"
)

// A converted map's keys are set in sorted order (pairs visits them so,
// run after run), whatever the map's size and however its keys share the
// state's cache of boxed keys; the same keys converted again are not boxed
// again.
func TestToLuaMapKeysSortedAndBoxedOnce(t *testing.T) {
	st := NewState(Options{})
	defer st.Close()
	for _, n := range []int{0, 1, 4, 12, 13, 40, 100} {
		m := map[string]any{}
		for k := range n {
			m[fmt.Sprintf("k%03d_%c", (k*37)%101, 'a'+k%26)] = float64(k)
		}
		m["a-very-long-key-that-the-cache-does-not-keep-because-it-is-long"] = true
		for round := range 2 {
			tb, ok := st.ToLua(m).(*lua.LTable)
			if !ok {
				t.Fatalf("%d keys: not a table", n)
			}
			var got []string
			for k, v := tb.Next(lua.LNil); k != lua.LNil; k, v = tb.Next(k) {
				got = append(got, string(k.(lua.LString)))
				if back, _ := st.FromLua(v); back != m[string(k.(lua.LString))] {
					t.Fatalf("%d keys, round %d: %s = %v, want %v", n, round, k, back, m[string(k.(lua.LString))])
				}
			}
			if len(got) != len(m) || !slices.IsSorted(got) {
				t.Fatalf("%d keys, round %d: pairs visits %v", n, round, got)
			}
		}
	}
	args := map[string]any{"path": "/src/main.go", "offset": 0.0, "limit": 1.0, "follow": true}
	st.ToLua(args)
	allocs := testing.AllocsPerRun(100, func() { st.ToLua(args) })
	// the table, its key and value lists, the string and the number 1
	// boxed: no key boxed (4 more without the cache)
	if allocs > 4 {
		t.Fatalf("converting a 4-key map again: %v allocations, want <= 4", allocs)
	}
}
