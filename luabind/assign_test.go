package luabind

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	lua "github.com/attune-dev/attune/internal/lua"
)

// runCompiled runs src compiled by Compile, the engine's one entry point.
func runCompiled(src string) string {
	p, err := Compile("t.lua", []byte(src))
	if err != nil {
		return "compile: " + err.Error()
	}
	return runProto(p)
}

func runProto(p *lua.FunctionProto) string {
	L := lua.NewState()
	defer L.Close()
	L.Push(L.NewFunctionFromProto(p))
	if err := L.PCall(0, 1, nil); err != nil {
		return "error: " + err.Error()
	}
	return L.Get(-1).String()
}

// The assignments gopher-lua v1.1.2 miscompiles, each pinned: internal/lua's
// compiler gets them right (internal/lua/compilefix_test.go fails on
// upstream's).
func TestMiscompiledShapesCompileRight(t *testing.T) {
	pre := "local function f() return false end local function n() return nil end local function five() return 5 end g = false local up = false\n"
	for _, c := range []struct{ name, src, want string }{
		{"local = call and y", `local x = 1; x = f() and 2; return tostring(x)`, "false"},
		{"local = call(nil) and y", `local x = 1; x = n() and 2; return tostring(x)`, "nil"},
		{"local = global and y", `local x = 1; x = g and 2; return tostring(x)`, "false"},
		{"local = upvalue and y", `local function h() local x = 1; x = up and 2; return tostring(x) end return h()`, "false"},
		{"local = field and y", `local t = {} local x = 1; x = t.k and 2; return tostring(x)`, "nil"},
		{"local = k and call and y", `local x = 1; x = 3 and f() and 2; return tostring(x)`, "false"},
		{"local = a or call and y", `local x = 1; x = nil or f() and 2; return tostring(x)`, "false"},
		{"local = not call and call and y", `local x = 1; x = not f() and f() and 2; return tostring(x)`, "false"},
		{"parameter = call and y", `local function h(x) x = f() and 2; return tostring(x) end return h(1)`, "false"},
		{"multiple: a, b = a + 1, a + b (#440)", `local a, b = 1, 2; a, b = a + 1, a + b; return a .. "," .. b`, "2,3"},
		{"multiple: swap", `local a, b = 1, 2; a, b = b, a; return a .. "," .. b`, "2,1"},
		{"multiple: swap through calls", `local a, b = 1, 2; a, b = tostring(b), a; return a .. "," .. b`, "2,1"},
		{"multiple: later value reads a target", `local a, b = "x", "y"; a, b = b .. a, a; return a .. "," .. b`, "yx,x"},
		{"multiple: a table constructor", `local a, b = 1, 2; a, b = {a}, a; return a[1] .. "," .. b`, "1,1"},
		{"multiple: a comparison", `local a, b = 1, 2; a, b = (b > a), a; return tostring(a) .. "," .. b`, "true,1"},
		{"multiple: an index", `local a, b = 1, 2; local t = {5, 6}; a, b = t[b], a; return a .. "," .. b`, "6,1"},
		{"multiple: an indexed target's table", `local a = {1}; local old = a; a, a[1] = 5, 9; return tostring(a) .. "," .. old[1]`, "5,9"},
		{"multiple: a closure that reads a target", `local a, b = 1, 2; local function geta() return a end; a, b = 7, geta(); return a .. "," .. b`, "7,1"},
		{"multiple: a logical value", `local x, y = 1, 1; x, y = f() and 2, 3; return tostring(x) .. tostring(y)`, "false3"},
		{"multiple: a field's value is a local", `local t, c = {}, 300; g, t.x = 5, c; return t.x .. g`, "3005"},
		{"multiple: extra values", `local t, a, c = {6}, 1, 300; g, t[a] = a + 7, c, 5; return g .. " " .. t[1]`, "8 300"},
	} {
		src := pre + c.src
		if got := runCompiled(src); got != c.want {
			t.Errorf("%s: got %s, want %s\n%s", c.name, got, c.want, c.src)
		}
	}
}

// Multiple assignments keep Lua's rules for calls and missing values, and
// for keys read before the assignment.
func TestMultipleAssignmentsKeepLuasRules(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`local t = {}; local k = "p"; k, t[k] = "q", 1; return tostring(t.p) .. tostring(t.q) .. k`, "1nilq"},
		{`local a, b, c = 1, 2, 3; local function two() return c, a end; a, b, c = two(); return tostring(a) .. tostring(b) .. tostring(c)`, "31nil"},
		{`local a, b = 1, 2; local function two() return 8, 9 end; a, b = two(), 5; return a .. b`, "85"},
		{`local a, b = 1, 2; local n = 0; local function bump() n = n + 1 return n end; a, b = 3, 4, bump(); return a .. b .. n`, "341"},
		{`local a, b = 1, 2; a, b = (function(...) return ... end)(b, a); return a .. b`, "21"},
		{`local function v(...) local a, b = 0, 0; a, b = ...; return tostring(a) .. b end return v(nil, 7)`, "nil7"},
		{`local t = {}; local c = 300; g, t.x = 5, c; return t.x .. g`, "3005"},
		{`local t = {6}; local a, c = 1, 300; g, t[a] = a + 7, c, 5; return g .. " " .. t[1]`, "8 300"},
		{`local t = {}; t.a, t.b = 1, 2; t.a, t.b = t.b, t.a; return t.a .. t.b`, "21"},
		{`local function m() local o = {n = 1}; function o:get() local s, k = 0, 0; s, k = self.n, s; return s .. k end; return o:get() end return m()`, "10"},
	} {
		if got := runCompiled(c.src); got != c.want {
			t.Errorf("%s: got %s, want %s", c.src, got, c.want)
		}
	}
}

// Errors raised inside a multiple assignment name its line.
func TestMultipleAssignmentKeepsItsLine(t *testing.T) {
	src := "local a, b = 1, 2\n\n\na, b = b, nil .. a\nreturn a"
	got := runCompiled(src)
	if !strings.Contains(got, "t.lua:4:") {
		t.Fatalf("got %s", got)
	}
}

// Differential, logical expressions: each expression of a generated corpus
// is assigned to an existing local and, for comparison, to a new local (a
// path gopher-lua always compiled right), under every assignment of truthy
// and falsy values to its operands, in one Lua loop; none may differ.
// gopher-lua v1.1.2 corrupted the first for many expressions of both
// corpora (operands only, and with constants mixed in).
func TestDifferentialLogicalAssignments(t *testing.T) {
	a := differentialLogical(t, rand.New(rand.NewPCG(1, 2)), false)
	b := differentialLogical(t, rand.New(rand.NewPCG(5, 6)), true)
	t.Logf("operands only: %d expressions; with constants: %d", a, b)
}

func differentialLogical(t *testing.T, rng *rand.Rand, constants bool) int {
	t.Helper()
	kinds := []string{"local", "global", "upvalue", "call", "field", "not", "compare"}
	if constants {
		kinds = append(kinds, "false", "nil", "7", "true")
	}
	n := 0
	for range 150 {
		leaves := 0
		var decl, set []string
		var gen func(depth int) string
		gen = func(depth int) string {
			if depth == 0 || (depth < 3 && rng.IntN(3) == 0) {
				k := kinds[rng.IntN(len(kinds))]
				i := leaves
				v := fmt.Sprintf("(bit(mask, %d) and 'v%d' or %s)", i, i, []string{"false", "nil"}[i%2])
				switch k {
				case "false", "nil", "7", "true":
					return k
				}
				leaves++
				switch k {
				case "local":
					decl = append(decl, fmt.Sprintf("local l%d", i))
					set = append(set, fmt.Sprintf("l%d = %s", i, v))
					return fmt.Sprintf("l%d", i)
				case "global":
					set = append(set, fmt.Sprintf("G%d = %s", i, v))
					return fmt.Sprintf("G%d", i)
				case "upvalue":
					set = append(set, fmt.Sprintf("u[%d] = %s", i, v))
					return fmt.Sprintf("up%d()", i) // placeholder, replaced below
				case "call":
					set = append(set, fmt.Sprintf("r[%d] = %s", i, v))
					return fmt.Sprintf("c(%d)", i)
				case "field":
					set = append(set, fmt.Sprintf("T.f%d = %s", i, v))
					return fmt.Sprintf("T.f%d", i)
				case "not":
					decl = append(decl, fmt.Sprintf("local l%d", i))
					set = append(set, fmt.Sprintf("l%d = %s", i, v))
					return fmt.Sprintf("not l%d", i)
				default:
					decl = append(decl, fmt.Sprintf("local l%d", i))
					set = append(set, fmt.Sprintf("l%d = %s", i, v))
					return fmt.Sprintf("(l%d == 'v%d')", i, i)
				}
			}
			op := " and "
			if rng.IntN(2) == 0 {
				op = " or "
			}
			l, r := gen(depth-1), gen(depth-1)
			if rng.IntN(3) == 0 {
				return "(" + l + op + r + ")"
			}
			return l + op + r
		}
		e := gen(3)
		if !strings.Contains(e, " and ") && !strings.Contains(e, " or ") {
			continue
		}
		// upvalues: one per leaf, declared outside run and set from inside
		var ups []string
		for i := range leaves {
			ph := fmt.Sprintf("up%d()", i)
			if strings.Contains(e, ph) {
				ups = append(ups, fmt.Sprintf("local U%d", i))
				e = strings.ReplaceAll(e, ph, fmt.Sprintf("U%d", i))
				for k, st := range set {
					if strings.HasPrefix(st, fmt.Sprintf("u[%d] = ", i)) {
						set[k] = fmt.Sprintf("U%d = ", i) + strings.TrimPrefix(st, fmt.Sprintf("u[%d] = ", i))
					}
				}
			}
		}
		src := "local function bit(m, i) return math.floor(m / 2^i) % 2 == 1 end\n" +
			"local r, T = {}, {} local function c(i) return r[i] end\n" + strings.Join(ups, "\n") + "\n" +
			"local function run()\n" + strings.Join(decl, "\n") + "\nlocal bad = 0\n" +
			fmt.Sprintf("for mask = 0, %d do\n", 1<<leaves-1) + strings.Join(set, "\n") + "\n" +
			"local want = " + e + "\nlocal x = 'old'\nx = " + e + "\n" +
			"if x ~= want then bad = bad + 1 end\nend\nreturn bad end return run()"
		n++
		if got := runCompiled(src); got != "0" {
			t.Errorf("x = %s: %s valuations differ from local want = %s", e, got, e)
		}
	}
	return n
}

// Differential, multiple assignments: a generated corpus of assignments to
// locals, an upvalue, a global and table fields, whose values read the
// targets by name and through a closure; Lua evaluates every expression
// before it assigns anything, so each result is computed here from the
// initial values and compared with what the compiled program gives.
func TestDifferentialMultipleAssignments(t *testing.T) {
	type target struct{ lua, name string }
	targets := []target{{"a", "a"}, {"b", "b"}, {"c", "c"}, {"u", "u"}, {"g", "g"}, {"t[1]", "t1"}, {"t[a]", "ta"}}
	init := map[string]int{"a": 1, "b": 20, "c": 300, "u": 4000, "g": 50000, "t1": 6, "ta": 6}
	names := []string{"a", "b", "c", "u", "g"}
	rng := rand.New(rand.NewPCG(3, 4))
	cases := 0
	for range 300 {
		// distinct targets: t[1] and t[a] name one field while a is 1 at the start
		perm := rng.Perm(len(targets))
		nt := 2 + rng.IntN(2)
		var lhs []target
		seen := map[string]bool{}
		for _, k := range perm {
			tg := targets[k]
			if tg.name == "t1" || tg.name == "ta" {
				if seen["t"] {
					continue
				}
				seen["t"] = true
			}
			lhs = append(lhs, tg)
			if len(lhs) == nt {
				break
			}
		}
		nv := 1 + rng.IntN(nt+1)
		var rhs []string
		var vals []int
		for range nv {
			x, y := names[rng.IntN(len(names))], names[rng.IntN(len(names))]
			switch rng.IntN(4) {
			case 0:
				rhs, vals = append(rhs, x), append(vals, init[x])
			case 1:
				rhs, vals = append(rhs, x+" + "+y), append(vals, init[x]+init[y])
			case 2:
				rhs, vals = append(rhs, "get_"+x+"()"), append(vals, init[x])
			default:
				rhs, vals = append(rhs, "t[1] * 2 + "+x), append(vals, init["t1"]*2+init[x])
			}
		}
		// expected state: every value computed before any assignment; a
		// missing value is nil (shown as -1)
		want := map[string]int{"a": 1, "b": 20, "c": 300, "u": 4000, "g": 50000, "t1": 6}
		// the indexed target's key is read before the assignment: t[a] is t[1]
		for k, tg := range lhs {
			v := -1
			if k < len(vals) {
				v = vals[k]
			}
			key := tg.name
			if key == "ta" {
				key = "t1"
			}
			want[key] = v
		}
		var ls []string
		for _, tg := range lhs {
			ls = append(ls, tg.lua)
		}
		stmt := strings.Join(ls, ", ") + " = " + strings.Join(rhs, ", ")
		src := "g = 50000 local u = 4000\nlocal function run()\nlocal a, b, c = 1, 20, 300\nlocal t = {6}\n" +
			"local function get_a() return a end local function get_b() return b end local function get_c() return c end\n" +
			"local function get_u() return u end local function get_g() return g end\n" +
			stmt + "\n" +
			"local function s(v) if v == nil then return '-1' end return tostring(v) end\n" +
			"return s(a)..' '..s(b)..' '..s(c)..' '..s(u)..' '..s(g)..' '..s(t[1]) end return run()"
		wantS := fmt.Sprintf("%d %d %d %d %d %d", want["a"], want["b"], want["c"], want["u"], want["g"], want["t1"])
		cases++
		if got := runCompiled(src); got != wantS {
			t.Errorf("%s: got %s, want %s", stmt, got, wantS)
		}
	}
	t.Logf("%d assignments", cases)
}

// loadstring compiles with the same compiler.
func TestLoadstringCompilesAssignmentsRight(t *testing.T) {
	s := NewState(Options{})
	defer s.Close()
	err := run(t, s, Callback, `
local chunk = assert(loadstring("local a, b = 1, 2; a, b = b, a; return a .. ',' .. b"))
assert(chunk() == "2,1", chunk())`)
	if err != nil {
		t.Fatal(err)
	}
}
