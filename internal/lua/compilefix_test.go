package lua

import "testing"

// attune's compiler fixes (compile.go, "attune:" comments): the programs
// here fail on gopher-lua v1.1.2's compiler, but for three that pin what
// the fixes keep (values filled and dropped, upvalue targets, a for list of
// two values).
func TestCompilerFixes(t *testing.T) {
	for _, c := range []struct{ name, src string }{
		// An and/or expression assigned to an existing local: the value of
		// an operand before the last was lost (x kept its old value).
		{"logical to a local, call operand", `
local function f() return false end
local x = 1
x = f() and 2
assert(x == false, tostring(x))`},
		{"logical to a local, global operand", `
g = nil
local x = 1
x = g and 2
assert(x == nil, tostring(x))`},
		{"logical to a local, field operand", `
local t = {k = false}
local x = 1
x = t.k and 2
assert(x == false, tostring(x))`},
		{"logical to a local, or then and", `
local function f() return nil end
local a, x = false, 1
x = a or f() and 2
assert(x == nil, tostring(x))`},
		// Multiple assignment: every value is read before any target is
		// assigned (upstream issue #440).
		{"swap", `
local a, b = 1, 2
a, b = b, a
assert(a == 2 and b == 1, a .. " " .. b)`},
		{"rotate", `
local a, b, c = 1, 2, 3
a, b, c = b, c, a
assert(a == 2 and b == 3 and c == 1, a .. b .. c)`},
		{"a closure called later in the statement", `
local a = 1
local function get() return a end
local y
a, y = 2, get()
assert(a == 2 and y == 1, tostring(y))`},
		{"a table target read before the assignment", `
local a = {}
local old = a
a, a.k = {}, 5
assert(old.k == 5 and a.k == nil)`},
		{"a global and a field whose value is a local", `
local t = {}
local c = 7
g2, t.x = 5, c
assert(g2 == 5 and t.x == 7, tostring(g2) .. " " .. tostring(t.x))`},
		{"values filled and dropped as a local statement does", `
local function two() return 1, 2 end
local a, b, c = 0, 0, 0
a, b, c = two()
assert(a == 1 and b == 2 and c == nil)
a, b, c = two(), 5
assert(a == 1 and b == 5 and c == nil)
a, b = 7, 8, two()
assert(a == 7 and b == 8)
local t = {}
t[1], t[2], t[3] = two()
assert(t[1] == 1 and t[2] == 2 and t[3] == nil)`},
		{"upvalue targets", `
local a, b = 1, 2
local function swap() a, b = b, a end
swap()
assert(a == 2 and b == 1)`},
		// A generic for's list: a call compiled into the generator's
		// register was overwritten by the next operand (a Go nil-pointer
		// panic in the VM).
		{"for list computed from a call", `
local function f(x) return x end
local s = "b\nc"
local out = {}
for l in (f("a\n") .. s):gmatch("[^\n]+") do out[#out + 1] = l end
assert(table.concat(out, ",") == "a,b,c", table.concat(out, ","))`},
		// A generic for's list of fewer than three values: the missing
		// ones are nil, whatever a block before left in their registers.
		{"for list of two values", `
local t = {a = 1}
do local x, y, z = 1, 2, "a" end
local n = 0
for k, v in next, t do n = n + 1 end
assert(n == 1, n)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			L := NewState()
			defer L.Close()
			if err := L.DoString(c.src); err != nil {
				t.Fatal(err)
			}
		})
	}
}
