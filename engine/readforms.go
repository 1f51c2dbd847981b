package engine

import (
	lua "github.com/attune-dev/attune/internal/lua"

	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/scheme"
)

// fReadForms is (read/forms TEXT): Scheme-style source read as forms, so a
// behavior can inspect a program by its structure, never by its text
// (a mention inside a string or a comment is not a call). It returns a list
// of forms, or, when the text does not read, a map {error = MESSAGE} (one
// value, so the Scheme-style forms reach the message). A list is a list; a symbol is a
// plain string ("tasks/write-completion-verdict"); a keyword is ":name"; a
// string literal is a table {string = "..."}; numbers and booleans are
// themselves. The input is bounded (64 KiB) like every built-in that the
// time budget cannot interrupt.
func fReadForms(s *luabind.State) int {
	text := s.CheckString("read/forms", 1)
	if len(text) > 64<<10 {
		return readError(s, "read/forms: the program is over 64 KiB")
	}
	forms, err := scheme.Read("program.scm", []byte(text))
	if err != nil {
		return readError(s, err.Error())
	}
	out := s.NewList()
	for _, f := range forms {
		out.Append(formValue(s, f, 0))
	}
	s.L.Push(out)
	return 1
}

func formValue(s *luabind.State, f *scheme.Form, depth int) lua.LValue {
	switch f.Kind {
	case scheme.List:
		t := s.NewList()
		if depth > 200 {
			return t
		}
		for _, it := range f.Items {
			t.Append(formValue(s, it, depth+1))
		}
		return t
	case scheme.Symbol:
		return lua.LString(f.Text)
	case scheme.Keyword:
		return lua.LString(":" + f.Text)
	case scheme.String:
		t := s.L.CreateTable(0, 1)
		t.RawSetString("string", lua.LString(f.Text))
		return t
	case scheme.Number:
		return lua.LNumber(f.Num)
	case scheme.Bool:
		return lua.LBool(f.Bool)
	}
	return lua.LNil
}

func readError(s *luabind.State, msg string) int {
	t := s.L.CreateTable(0, 1)
	t.RawSetString("error", lua.LString(msg))
	s.L.Push(t)
	return 1
}
