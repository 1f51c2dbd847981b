package luabind

import (
	"strings"
	"testing"
	"time"

	lua "github.com/attune-dev/attune/internal/lua"
)

// FuzzPatterns: the budget-aware matcher never fails with a Go runtime
// error (an index out of range would surface as one), whatever the pattern
// and subject; malformed patterns are Lua errors.
func FuzzPatterns(f *testing.F) {
	for _, seed := range [][2]string{{"hello world", "(%w+) (%w+)"}, {"a,b,,c", "[^,]*"}, {"x]y", "[]]"},
		{"((a))", "%b()"}, {"THE (quick)", "%f[%a]%a+"}, {"abab", "(ab)%1"}, {"aaa", "a-b"}, {"", "^$"}, {"x", "[%"}, {"x", "(()"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, subject, pattern string) {
		s := NewState(Options{Budget: 200 * time.Millisecond})
		defer s.Close()
		s.L.SetGlobal("s", lua.LString(subject))
		s.L.SetGlobal("p", lua.LString(pattern))
		p, err := Compile("f.lua", []byte(`
			string.find(s, p) string.match(s, p) string.gsub(s, p, "%0") string.gsub(s, p, function(...) return nil end)
			for a in string.gmatch(s, p) do end`))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Call(Callback, s.Load(p), 0); err != nil && strings.Contains(err.Error(), "runtime error") {
			t.Fatalf("find(%q, %q): %v", subject, pattern, err)
		}
	})
}
