package scheme

import (
	"strings"
	"testing"

	lua "github.com/attune-dev/attune/internal/lua"
)

// TestRun lowers small programs, runs them in gopher-lua and checks what they
// emit: each (emit X) records X, and the records are joined by spaces.
// R7.3
func TestRun(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"define value", `(define x 5) (emit x)`, `5`},
		{"define function", `(define (square x) (* x x)) (emit (square 7))`, `49`},
		{"recursion", `(define (fact n) (if (<= n 1) 1 (* n (fact (- n 1))))) (emit (fact 10))`, `3628800`},
		{"mutual recursion at top level", `
			(define (even? n) (if (= n 0) #t (odd? (- n 1))))
			(define (odd? n) (if (= n 0) #f (even? (- n 1))))
			(emit (even? 10)) (emit (odd? 7)) (emit (even? 3))`, `#t #t #f`},
		{"forward reference from a handler", `
			(define (run) (later 2))
			(define (later x) (* x 10))
			(emit (run))`, `20`},
		{"internal defines", `
			(define (f a)
			  (define b (* a 2))
			  (define (ev? n) (if (= n 0) #t (od? (- n 1))))
			  (define (od? n) (if (= n 0) #f (ev? (- n 1))))
			  (list b (ev? a)))
			(emit (f 4))`, `(8 #t)`},
		{"define as the last form yields nil", `(define (f) (define x 1)) (emit (f))`, `nil`},
		{"lambda returns its last form", `(define f (lambda (x) (emit "side") (+ x 1))) (emit (f 1))`, `"side" 2`},
		{"closures", `
			(define (make-counter)
			  (let ((n 0))
			    (lambda () (set! n (+ n 1)) n)))
			(define a (make-counter))
			(define b (make-counter))
			(a) (a)
			(emit (a)) (emit (b))`, `3 1`},
		{"let binds in parallel", `(define x 1) (emit (let ((x 2) (y x)) (list x y)))`, `(2 1)`},
		{"let* binds in sequence", `(define x 1) (emit (let* ((x 2) (y x)) (list x y)))`, `(2 2)`},
		{"let init sees the outer name", `(define x 1) (emit (let ((x (+ x 1))) x))`, `2`},
		{"let with a body of several forms", `(emit (let ((x 1)) (emit "in") (+ x 1)))`, `"in" 2`},
		{"named let", `(emit (let loop ((i 1) (acc 0)) (if (> i 10) acc (loop (+ i 1) (+ acc i)))))`, `55`},
		{"named let runs in constant stack", `(emit (let loop ((i 0)) (if (< i 200000) (loop (+ i 1)) i)))`, `200000`},
		{"define from a let of the same name", `(define x (let ((x 1)) (+ x 1))) (emit x)`, `2`},
		{"set! from a let of the same name", `(define y 0) (set! y (let ((y 5)) (* y 2))) (emit y)`, `10`},
		{"define from a body that defines the same name", `
			(define (f)
			  (define r (begin (define r 3) r))
			  r)
			(emit (f))`, `3`},
		{"if in expression position", `(emit (+ 1 (if #f 10 (if #t 20 30))))`, `21`},
		{"if yields false and nil", `(emit (if #t #f 1)) (emit (if #t nil 1)) (emit (if #f 1))`, `#f nil nil`},
		{"nested ifs as arguments", `
			(define (f a b) (string-append (if a "A" "a") (if b (if a "AB" "B") "b")))
			(emit (f #t #t)) (emit (f #f #t)) (emit (f #f #f))`, `"AAB" "aB" "ab"`},
		{"if only evaluates one branch", `(if #t (emit "then") (emit "else"))`, `"then"`},
		{"cond", `
			(define (classify n)
			  (cond ((< n 0) "negative") ((= n 0) "zero") ((< n 10) "small") (else "large")))
			(emit (classify -5)) (emit (classify 0)) (emit (classify 3)) (emit (classify 30))`,
			`"negative" "zero" "small" "large"`},
		{"cond without a match is nil", `(emit (cond (#f 1)))`, `nil`},
		{"cond clause without a body yields its test", `(emit (cond (#f 1) ((+ 1 1)) (else 3)))`, `2`},
		{"cond test that needs statements", `
			(define (f s) (cond ((get s :a) 'a) ((let ((b (get s :b))) b) 'b) (else 'none)))
			(emit (f (table :a 1))) (emit (f (table :b 1))) (emit (f (table)))`, `"a" "b" "none"`},
		{"cond stops at the first true clause", `(cond ((begin (emit 1) #f) 1) ((begin (emit 2) #t) 2) ((begin (emit 3) #t) 3))`, `1 2`},
		{"when and unless", `
			(when #t (emit "when"))
			(when #f (emit "never"))
			(unless #f (emit "unless"))
			(emit (when #f 1)) (emit (when 0 1 2)) (emit (unless #f 1 2)) (emit (unless #t 1))`,
			`"when" "unless" nil 2 2 nil`},
		{"begin", `(emit (begin 1 2 3)) (emit (begin (emit "first") "second"))`, `3 "first" "second"`},
		{"begin at the top level defines", `(begin (define a 1) (define b 2)) (emit (+ a b))`, `3`},
		{"set!", `(define x 1) (set! x (+ x 1)) (emit x) (set! x (if #f 1)) (emit x)`, `2 nil`},
		{"set! on a field", `(define s (table :n 1)) (set! s.n 5) (emit s)`, `{"n"=5}`},
		{"set! yields nil", `(define x 1) (emit (set! x 2)) (emit x)`, `nil 2`},
		{"and", `(emit (and 1 2 3)) (emit (and 1 #f 3)) (emit (and)) (emit (and nil 1))`, `3 #f #t nil`},
		{"or", `(emit (or #f nil 5)) (emit (or #f #f)) (emit (or)) (emit (or 1 2))`, `5 #f #f 1`},
		{"and short-circuits", `(and #f (emit "no")) (and #t (emit "yes")) (emit (and #f (error "boom")))`, `"yes" #f`},
		{"or short-circuits", `(or 1 (emit "no")) (or #f (emit "yes")) (emit (or 1 (error "boom")))`, `"yes" 1`},
		{"and/or with operands that need statements", `
			(emit (and #t (let ((y 4)) y)))
			(emit (and #f (let ((y (error "boom"))) y)))
			(emit (or #f (let ((y 5)) y)))
			(emit (or 7 (let ((y (error "boom"))) y)))`, `4 #f 5 7`},
		{"and of a false call assigned to an existing local", `
			(define (no) #f)
			(define x 1)
			(set! x (and (no) 1))
			(emit x)
			(define (g) (define r 1) (set! r (and (no) 1)) r)
			(emit (g))
			(emit (let ((y 1)) (set! y (or (no) (and (no) 2))) y))`, `#f #f #f`},
		{"not", `(emit (not #f)) (emit (not nil)) (emit (not 0)) (emit (not (list))) (emit (not ""))`, `#t #t #f #f #f`},
		{"0, empty string and empty list are true", `(emit (if 0 'yes 'no)) (emit (if "" 'yes 'no)) (emit (if (list) 'yes 'no))`, `"yes" "yes" "yes"`},
		{"map", `(emit (map (lambda (x) (* x 2)) (list 1 2 3)))`, `(2 4 6)`},
		{"map of the empty list is a list", `(emit (map (lambda (x) x) (list)))`, `()`},
		{"map with a helper as the function", `(emit (map length (list "a" "bb" (list 1 2 3))))`, `(1 2 3)`},
		{"filter", `(emit (filter (lambda (x) (> x 2)) (list 1 2 3 4)))`, `(3 4)`},
		{"filter to nothing is a list", `(emit (filter (lambda (x) #f) (list 1 2)))`, `()`},
		{"fold calls (f x acc) in order", `
			(emit (fold (lambda (x acc) (string-append acc x)) "" (list "a" "b" "c")))
			(emit (fold (lambda (x acc) (+ x acc)) 0 (list 1 2 3 4)))
			(emit (fold (lambda (x acc) (put! acc x #t)) (table) (list "p" "q")))`,
			`"abc" 10 {"p"=#t "q"=#t}`},
		{"fold over nothing is init", `(emit (fold (lambda (x acc) x) 42 (list)))`, `42`},
		{"string-append", `(emit (string-append "a" "b" "c")) (emit (string-append)) (emit (string-append "x"))`, `"abc" "" "x"`},
		{"string-append with numbers", `(emit (string-append "n=" 5))`, `"n=5"`},
		{"length", `(emit (length (list 1 2 3))) (emit (length "hello")) (emit (length (list))) (emit (length ""))`, `3 5 0 0`},
		{"null?", `
			(emit (null? (list))) (emit (null? nil)) (emit (null? (list 1)))
			(emit (null? (table))) (emit (null? (table :a 1))) (emit (null? "")) (emit (null? #f))`,
			`#t #t #f #t #f #f #f`},
		{"list", `(emit (list 1 "two" #t)) (emit (list)) (emit (list (list 1) (list)))`, `(1 "two" #t) () ((1) ())`},
		{"list keeps one value of a call", `(emit (list (string.find "abc" "b")))`, `(2)`},
		{"table", `(emit (table :name "x" :post-fail 1 :1 "one" "k" 2))`, `{"1"="one" "k"=2 "name"="x" "post_fail"=1}`},
		{"empty table", `(emit (table))`, `{}`},
		{"get", `
			(define t (table :a 1 :post-fail 2 "b c" 3))
			(emit (get t :a)) (emit (get t :post-fail)) (emit (get t "b c")) (emit (get t :missing))
			(emit (get (list 10 20) 2))`, `1 2 3 nil 20`},
		{"put!", `
			(define t (table))
			(put! t :a 1)
			(put! t "b" 2)
			(emit t)
			(emit (get (put! (table) :c 3) :c))`, `{"a"=1 "b"=2} 3`},
		{"put! yields the table", `(define t (table)) (emit (= (put! t :x 1) t))`, `#t`},
		{"quote", `(emit 'sym) (emit '(a (b c) 1 "s" #f)) (emit '()) (emit (quote x)) (emit ':post-fail)`,
			`"sym" ("a" ("b" "c") 1 "s" #f) () "x" "post_fail"`},
		{"quoted symbols keep their spelling", `(emit 'null?) (emit 'a-b)`, `"null?" "a-b"`},
		{"keywords as values", `(emit (list :post-fail :b)) (emit (if #t :yes :no))`, `("post_fail" "b") "yes"`},
		{"arithmetic", `
			(emit (+ 1 2 3)) (emit (- 10 1 2)) (emit (- 10)) (emit (* 2 3 4)) (emit (/ 12 2 3)) (emit (/ 2))
			(emit (+)) (emit (*)) (emit (+ 7)) (emit (- -1.5 2)) (emit (- (- 3)))`,
			`6 7 -10 24 2 0.5 0 1 7 -3.5 3`},
		{"comparison", `
			(emit (= 1 1)) (emit (= 1 2)) (emit (< 1 2 3)) (emit (< 1 3 2)) (emit (>= 3 3 2)) (emit (> 2 1))
			(emit (<= 2 2)) (emit (= "a" "a"))`, `#t #f #t #f #t #t #t #t`},
		{"chained comparison evaluates each operand once", `
			(define n 0)
			(define (next) (set! n (+ n 1)) n)
			(emit (< 0 (next) 5)) (emit n)`, `#t 1`},
		{"calls gather keywords into one options table", `
			(define (f a b opts) (list a b opts))
			(emit (f 1 2 :k 3 :post-fail 4))
			(emit (f 1 :k 3 2))`, `(1 2 {"k"=3 "post_fail"=4}) (1 2 {"k"=3})`},
		{"arguments are evaluated in source order", `
			(define (note x) (emit x) x)
			(define (g a b c d) (list a b c d))
			(emit (g (note 1) (if (note 2) (note 3) 0) (let ((x (note 4))) x) (note 5)))`,
			`1 2 3 4 5 (1 3 4 5)`},
		{"options keep source order", `
			(define (note x) (emit x) x)
			(define (g a b o) (list a b o))
			(emit (g (note 1) :k (note 2) (note 3)))`, `1 2 3 (1 3 {"k"=2})`},
		{"Lua keywords as names", `(define end 5) (define (local x) x) (emit (local end))`, `5`},
		{"mangled names", `(define (done? x) (null? x)) (define (reset! t) (put! t :n 0)) (emit (done? (list))) (emit (reset! (table :n 5)))`,
			`#t {"n"=0}`},
		{"slash and dot paths", `(emit (string/upper "ab")) (emit (string.lower "CD"))`, `"AB" "cd"`},
		{"nil symbol", `(emit nil) (emit (null? nil))`, `nil #t`},
		{"strings", `(emit "a\tb\n\"c\"\\") (emit "x\x41;y") (emit "two
lines")`, `"a\tb\n\"c\"\\" "xAy" "two\nlines"`},
		{"lambda calling itself through a let", `
			(define (f n) (let ((g (lambda (k) (* k 2)))) (g n)))
			(emit (f 21))`, `42`},
		{"immediately applied lambda", `(emit ((lambda (x y) (+ x y)) 1 2))`, `3`},
		{"computed function", `(emit ((if #t + -) 1 2))`, `ERROR`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == "ERROR" {
				if _, err := Lower("case.scm", []byte(tc.src)); err == nil {
					t.Fatal("Lower succeeded; want an error")
				}
				return
			}
			L := newLuaState(t)
			var got []string
			L.SetGlobal("emit", L.NewFunction(func(L *lua.LState) int {
				got = append(got, show(L, L.Get(1)))
				return 0
			}))
			if err := runLowered(t, L, "case.scm", tc.src); err != nil {
				out, _ := Lower("case.scm", []byte(tc.src))
				t.Fatalf("run: %v\n%s", err, out)
			}
			if s := strings.Join(got, " "); s != tc.want {
				out, _ := Lower("case.scm", []byte(tc.src))
				t.Errorf("emitted %s\nwant    %s\nlowered:\n%s", s, tc.want, out)
			}
		})
	}
}
