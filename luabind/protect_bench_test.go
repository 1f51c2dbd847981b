package luabind

import "testing"

// BenchmarkProtectedCall is pcall of a Lua function that returns and of
// one that fails, the shapes a caught error takes in behaviors.
func BenchmarkProtectedCall(b *testing.B) {
	s := NewState(Options{})
	defer s.Close()
	p, err := Compile("b.lua", []byte(`
		local n = 0
		local function ok(x) n = n + x return n end
		local function fail() error("no") end
		return function()
			for i = 1, 100 do
				pcall(ok, 1)
				pcall(fail)
			end
		end`))
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Call(Callback, s.Load(p), 1); err != nil {
		b.Fatal(err)
	}
	fn := s.L.Get(-1)
	s.L.Pop(1)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Call(Callback, fn, 0); err != nil {
			b.Fatal(err)
		}
	}
}
