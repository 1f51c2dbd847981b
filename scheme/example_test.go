package scheme_test

import (
	"fmt"

	"github.com/attune-dev/attune/scheme"
)

func ExampleLower() {
	src := `(hook/tool "fs/*"
  :pre (lambda (call) (mark call "seen"))
  :post-fail log-failure)
(define/reducer 'tasks apply :scope (list "session" "project"))
`
	out, err := scheme.Lower("audit.scm", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(out)
	// Output:
	// hook.tool("fs/*",
	//   {pre = function(call) return mark(call, "seen") end,
	//   post_fail = log_failure})
	// define.reducer("tasks", apply, {scope = {"session", "project"}})
}

func ExampleRead() {
	forms, err := scheme.Read("note.scm", []byte("; greet\n(notify \"hi\" :kind 'ambient)"))
	if err != nil {
		fmt.Println(err)
		return
	}
	forms[0].Walk(func(f *scheme.Form) bool {
		fmt.Printf("%d:%d %s %s\n", f.Line, f.Col, f.Kind, f)
		return true
	})
	// Output:
	// 2:1 list (notify "hi" :kind (quote ambient))
	// 2:2 symbol notify
	// 2:9 string "hi"
	// 2:14 keyword :kind
	// 2:20 list (quote ambient)
	// 2:20 symbol quote
	// 2:21 symbol ambient
}

func ExampleError() {
	_, err := scheme.Lower("broken.scm", []byte("(define (f x)\n  (if))"))
	fmt.Println(err)
	// Output:
	// broken.scm:2:3: if: takes a test, a then-form and an optional else-form: (if TEST THEN ELSE); use cond for more branches and begin for several forms
}
