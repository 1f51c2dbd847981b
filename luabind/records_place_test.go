package luabind

import (
	"fmt"
	"math/rand/v2"
	"testing"

	lua "github.com/attune-dev/attune/internal/lua"
)

// SetFieldAt writes a record's field by its place without comparing keys:
// whatever a handler did to a record, the one the pool hands out next has
// its fields at their places (or none, and is written by key).
func TestRecordFieldsKeepTheirPlaces(t *testing.T) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	lua.OpenBase(L)
	fields := []string{"args", "attempt", "call_id", "instance", "marks", "path"}
	edits := []string{
		`r.path = nil`, `r.args = nil r.args = 1`, `r.extra = 1`, `r.extra = nil`,
		`r[1] = "x"`, `r[true] = 1`, `setmetatable(r, {})`, `rawset(r, 2.5, 1)`,
		`for k = 1, 12 do r["k" .. k] = k end`, `r.marks = {}`, `r.call_id = "mine"`,
		`for k in pairs(r) do r[k] = nil end`, ``,
	}
	var p RecordPool
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 2000 {
		r := p.Get(L, fields)
		for k, f := range fields {
			SetFieldAt(r, k, f, lua.LString(fmt.Sprintf("%s-%d", f, round)))
		}
		for _, f := range fields {
			if got, want := r.RawGetString(f), lua.LString(fmt.Sprintf("%s-%d", f, round)); got != want {
				t.Fatalf("round %d: field %s holds %v, want %v", round, f, got, want)
			}
		}
		seen := 0
		r.ForEach(func(k, v lua.LValue) {
			if s, ok := k.(lua.LString); ok && v == lua.LString(fmt.Sprintf("%s-%d", s, round)) {
				seen++
			}
		})
		if seen != len(fields) {
			t.Fatalf("round %d: pairs sees %d of the %d fields", round, seen, len(fields))
		}
		L.SetGlobal("r", r)
		if err := L.DoString(edits[rng.IntN(len(edits))]); err != nil {
			t.Fatal(err)
		}
		p.Put(r)
	}
}
