package scheme

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	lua "github.com/attune-dev/attune/internal/lua"
)

// gen builds random expressions from the special forms. Each (note X)
// records X and returns it, so a run records the order of evaluation.
type gen struct {
	r *rand.Rand
	n int
}

func (g *gen) expr(depth int, vars []string) string {
	leaf := func() string {
		switch g.r.Intn(6) {
		case 0:
			return fmt.Sprint(g.r.Intn(10))
		case 1:
			return `"s` + fmt.Sprint(g.r.Intn(3)) + `"`
		case 2:
			return []string{"#t", "#f", "nil"}[g.r.Intn(3)]
		case 3:
			if len(vars) > 0 {
				return vars[g.r.Intn(len(vars))]
			}
			return "7"
		case 4:
			return "'" + []string{"sym", "(a b)", "()"}[g.r.Intn(3)]
		default:
			g.n++
			return fmt.Sprintf("(note %d)", g.n)
		}
	}
	if depth <= 0 {
		return leaf()
	}
	e := func() string { return g.expr(depth-1, vars) }
	bind := func() (string, []string) {
		name := []string{"x", "y", "z"}[g.r.Intn(3)]
		return name, append(append([]string{}, vars...), name)
	}
	switch g.r.Intn(22) {
	case 0:
		return leaf()
	case 1:
		return fmt.Sprintf("(note %s)", e())
	case 2:
		return fmt.Sprintf("(list %s %s)", e(), e())
	case 3:
		return fmt.Sprintf("(if %s %s %s)", e(), e(), e())
	case 4:
		return fmt.Sprintf("(if %s %s)", e(), e())
	case 5:
		return fmt.Sprintf("(cond (%s %s) (%s) (else %s))", e(), e(), e(), e())
	case 6:
		return fmt.Sprintf("(cond (%s %s %s) (%s %s))", e(), e(), e(), e(), e())
	case 7:
		return fmt.Sprintf("(when %s %s %s)", e(), e(), e())
	case 8:
		return fmt.Sprintf("(unless %s %s)", e(), e())
	case 9:
		name, inner := bind()
		return fmt.Sprintf("(let ((%s %s) (w %s)) %s %s)", name, e(), e(), e(), g.expr(depth-1, inner))
	case 10:
		name, inner := bind()
		return fmt.Sprintf("(let* ((%s %s) (%s %s)) %s)", name, e(), name, g.expr(depth-1, inner), g.expr(depth-1, inner))
	case 11:
		return fmt.Sprintf("(begin %s %s)", e(), e())
	case 12:
		return fmt.Sprintf("(and %s %s %s)", e(), e(), e())
	case 13:
		return fmt.Sprintf("(or %s %s)", e(), e())
	case 14:
		return fmt.Sprintf("(not %s)", e())
	case 15:
		if len(vars) > 0 {
			return fmt.Sprintf("(begin (set! %s %s) %s)", vars[g.r.Intn(len(vars))], e(), vars[g.r.Intn(len(vars))])
		}
		return leaf()
	case 16:
		name, inner := bind()
		return fmt.Sprintf("((lambda (%s) %s) %s)", name, g.expr(depth-1, inner), e())
	case 17:
		return fmt.Sprintf("(let loop ((i 0) (acc %s)) (if (< i 2) (loop (+ i 1) (list acc %s)) acc))", e(), e())
	case 18:
		return fmt.Sprintf("(f %s :k %s %s)", e(), e(), e())
	case 19:
		return fmt.Sprintf("(get (put! (table) :k %s) :k)", e())
	case 20:
		name, inner := bind()
		return fmt.Sprintf("(let () (define %s %s) (define (h) %s) (h))", name, e(), g.expr(depth-1, inner))
	default:
		return fmt.Sprintf("(null? %s)", e())
	}
}

// last is the last space-separated record of a run: its emitted value.
func last(run string) string {
	if i := strings.LastIndex(run, " ="); i >= 0 {
		return run[i+1:]
	}
	return run
}

// TestDifferential lowers random expressions in every destination the
// translator has (an argument, a top-level define, a function's return
// value, a let binding, a statement) and checks that each records the same
// evaluation order and yields the same value.
func TestDifferential(t *testing.T) {
	g := &gen{r: rand.New(rand.NewSource(7))}
	n := differentialExprs // 150 by default, 600 with -tags e2e (diff_corpus*_test.go)
	if testing.Short() {
		n = 50
	}
	prelude := "(define (f a b o) (list a b o))\n"
	for i := 0; i < n; i++ {
		e := g.expr(4, nil)
		progs := []string{
			"(emit " + e + ")",
			"(define v " + e + ")\n(emit v)",
			"(emit ((lambda () " + e + ")))",
			"(emit (let ((r " + e + ")) r))",
			"(emit (get (list " + e + ") 1))",
			"(define (g) " + e + " 'done)\n(g)\n(emit 'statement)",
		}
		var results []string
		for j, p := range progs {
			L := openLuaState()
			var got []string
			L.SetGlobal("emit", L.NewFunction(func(L *lua.LState) int {
				got = append(got, "="+show(L, L.Get(1)))
				return 0
			}))
			L.SetGlobal("note", L.NewFunction(func(L *lua.LState) int {
				got = append(got, show(L, L.Get(1)))
				L.Push(L.Get(1))
				return 1
			}))
			src := prelude + p
			err := runLowered(t, L, "diff.scm", src)
			L.Close()
			if err != nil {
				out, _ := Lower("diff.scm", []byte(src))
				t.Fatalf("program %d/%d failed: %v\n%s\nlowered:\n%s", i, j, err, src, out)
			}
			if j == len(progs)-1 {
				// A statement has no value: compare the notes, then the
				// value the first program emitted.
				got = append(got[:len(got)-1], last(results[0]))
			}
			results = append(results, strings.Join(got, " "))
		}
		for j := 1; j < len(results); j++ {
			if results[j] != results[0] {
				out, _ := Lower("diff.scm", []byte(prelude+progs[j]))
				t.Fatalf("expression %s\n as an argument: %s\n in program %d:  %s\n%s\nlowered:\n%s", e, results[0], j, results[j], progs[j], out)
			}
		}
	}
}
