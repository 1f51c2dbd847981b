package luabind

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	lua "github.com/attune-dev/attune/internal/lua"
)

// The budget-aware matcher agrees with gopher-lua's on ordinary patterns.
func TestPatternsAgree(t *testing.T) {
	cases := []string{
		`string.find("hello world", "o w")`,
		`string.find("hello world", "o", 6)`,
		`string.find("hello world", "l+")`,
		`string.find("hello", "")`,
		`string.find("a.b", ".", 1, true)`,
		`string.find("  key = value ", "^%s*(%w+)%s*=%s*(.-)%s*$")`,
		`string.match("  trim me  ", "^%s*(.-)%s*$")`,
		`string.match("2024-01-02", "(%d+)-(%d+)-(%d+)")`,
		`string.match("abc", "()b()")`,
		`string.match("fs/read", "^([^/]+)/(.*)$")`,
		`string.match("THE (quick) fox", "%((%a+)%)")`,
		`string.match("x = [[a]]", "%b[]")`,
		`string.match("hello", "h?ello")`,
		`(string.match("aaa", "a-b"))`,
		`string.match("aaab", "a-b")`,
		`string.match("key: v", "^(%w+):%s*(.*)")`,
		`string.match("abab", "(ab)%1")`,
		`string.match("a,b,,c", "[^,]*")`,
		`string.match("x]y", "[]]")`,
		`string.match("x-y", "[a%-z]")`,
		`(string.match("hello", "[^%a]"))`,
		`string.match("TeSt", "%u%l%u%l")`,
		`string.gsub("hello world", "o", "0")`,
		`string.gsub("hello world", "(%w+)", "<%1>")`,
		`string.gsub("hello world", "%w+", "%0 %0", 1)`,
		`string.gsub("abc", "", "-")`,
		`string.gsub("hello", "l", {l = "L"})`,
		`string.gsub("$name is $age", "%$(%w+)", {name = "bob", age = 3})`,
		`string.gsub("abc", "%w", function(c) return c:upper() .. "." end)`,
		`string.gsub("abc", "^a", "x")`,
		`string.gsub("a b c", " ", "%%")`,
	}
	ref := lua.NewState()
	defer ref.Close()
	s := NewState(Options{})
	defer s.Close()
	for _, c := range cases {
		want := results(t, ref, c)
		p, err := Compile("t.lua", []byte("return "+c))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Call(Callback, s.Load(p), lua.MultRet); err != nil {
			t.Errorf("%s: %v", c, err)
			continue
		}
		var got []string
		for k := 1; k <= s.L.GetTop(); k++ {
			got = append(got, s.L.Get(k).String())
		}
		s.L.SetTop(0)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: got %q, want %q", c, got, want)
		}
	}
	if err := run(t, s, Callback, `
		local out = {}
		for k, v in string.gmatch("a=1, b=2", "(%w+)=(%w+)") do out[#out+1] = k .. v end
		assert(table.concat(out, ";") == "a1;b2", table.concat(out, ";"))
		local n = 0
		for w in ("one two  three"):gmatch("%a+") do n = n + 1 end
		assert(n == 3)`); err != nil {
		t.Error(err)
	}
}

func results(t *testing.T, L *lua.LState, code string) []string {
	t.Helper()
	if err := L.DoString("return " + code); err != nil {
		t.Fatalf("%s: %v", code, err)
	}
	var out []string
	for k := 1; k <= L.GetTop(); k++ {
		out = append(out, L.Get(k).String())
	}
	L.SetTop(0)
	return out
}

// Built-ins that could run long or return a lot are bounded: a callback
// past its budget is cancelled inside a match, and large results are a
// clear error.
func TestBoundedBuiltins(t *testing.T) {
	s := NewState(Options{Budget: 300 * time.Millisecond})
	defer s.Close()
	for _, src := range []string{
		`string.find(string.rep("a", 200), ".-.-.-.-.-b")`,
		`string.match(string.rep("a", 200), "(.-)(.-)(.-)(.-)(.-)b")`,
		`string.gsub(string.rep("a", 200), ".-.-.-.-.-b", "")`,
		`for m in string.gmatch(string.rep("a", 200), ".-.-.-.-.-b") do end`,
		`return xpcall(function() string.find(string.rep("a", 200), ".-.-.-.-.-b") end, function(e) return e end)`,
		`return pcall(string.find, string.rep("a", 200), ".-.-.-.-.-b")`,
		`local function spin() while true do end end return pcall(spin)`,
		`local function spin() while true do end end return spin()`,
	} {
		start := time.Now()
		err := run(t, s, Callback, src)
		if !errors.Is(err, ErrBudget) {
			t.Errorf("%s: got %v, want the budget", src, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s: took %v", src, d)
		}
	}
	// the bounds: a generous budget, so that only the bound can fail them
	s = NewState(Options{Budget: 20 * time.Second})
	defer s.Close()
	for src, want := range map[string]string{
		`local t = {} for i = 1, 100000 do t[i] = i end unpack(t)`:                                "unpack: 100000 results, over the limit",
		`string.byte(string.rep("x", 2000000), 1, -1)`:                                            "string.byte: 2000000 results, over the limit",
		`local t = {} for i = 1, 1000 do t[i] = "x" end table.concat(t, string.rep("s", 2^24))`:   "memory: table.concat",
		`string.gsub(string.rep("x", 1000), "x", string.rep("y", 2^20))`:                          "memory: string.gsub",
		`string.format("%999999d", 1)`:                                                            "width or precision too long",
		`local s = string.rep("x", 2^23) string.format("%s%s%s", s, s, s)`:                        "memory: string.format",
		`string.rep("x", 2^25)`:                                                                   "string.rep",
		`string.find("x", "(((((((((((((((((((((((((((((((((x)))))))))))))))))))))))))))))))))")`: "too many captures",
		`string.find(string.rep("x", 300), string.rep("x?", 300))`:                                "pattern too complex",
	} {
		err := run(t, s, Callback, src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", src, err, want)
		}
	}
	if err := run(t, s, Callback, `assert(select("#", unpack({1, 2, 3})) == 3)
		assert(string.byte("abc", 1, -1) == 97)
		assert(table.concat({1, "b", 3}, ",") == "1,b,3")
		assert(string.format("%5.2f|%s|%d", 1.5, "x", 3) == " 1.50|x|3")`); err != nil {
		t.Error(err)
	}
}
