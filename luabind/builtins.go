package luabind

import (
	"strings"

	lua "github.com/attune-dev/attune/internal/lua"
)

// Bounded built-ins. A single built-in call cannot be interrupted by the
// budget, and gopher-lua grows the value stack 128 slots at a time, so a
// built-in that returns a million values copies the stack thousands of
// times (`unpack` of 1M elements took 44 s). Each built-in that can return
// many values or build a large string is bounded here.

// maxResults bounds how many values one built-in returns (Lua's own C
// stack limit, LUAI_MAXCSTACK, is 8000).
const maxResults = 8000

// boundBuiltins replaces the unbounded built-ins of the shared libraries.
func boundBuiltins(L *lua.LState, base map[string]lua.LValue, str, tab *lua.LTable) {
	base["unpack"] = L.NewFunction(boundedUnpack)
	str.RawSetString("byte", L.NewFunction(boundedByte))
	str.RawSetString("find", L.NewFunction(strFind))
	str.RawSetString("match", L.NewFunction(strMatch))
	str.RawSetString("gmatch", L.NewFunction(strGmatch))
	str.RawSetString("gsub", L.NewFunction(strGsub))
	format := str.RawGetString("format").(*lua.LFunction)
	str.RawSetString("format", L.NewFunction(func(L *lua.LState) int {
		checkFormat(L)
		return format.GFunction(L)
	}))
	tab.RawSetString("concat", L.NewFunction(boundedConcat))
}

func tooMany(L *lua.LState, name string, n int) {
	L.RaiseError("%s: %d results, over the limit of %d", name, n, maxResults)
}

func boundedUnpack(L *lua.LState) int {
	tb := L.CheckTable(1)
	start := L.OptInt(2, 1)
	end := L.OptInt(3, tb.Len())
	if start > end {
		return 0
	}
	// start <= end, so the difference is exact as an unsigned number even
	// where it wraps (a start of NaN or -2^63 ran for minutes)
	if d := uint64(int64(end) - int64(start)); d >= maxResults {
		L.RaiseError("unpack: %d results, over the limit of %d", d+1, maxResults)
	}
	for i := start; i <= end; i++ {
		L.Push(tb.RawGetInt(i))
	}
	return end - start + 1
}

func boundedByte(L *lua.LState) int {
	s := L.CheckString(1)
	i := posrelat(L.OptInt(2, 1), len(s))
	j := posrelat(L.OptInt(3, i), len(s))
	if i < 1 {
		i = 1
	}
	if j > len(s) {
		j = len(s)
	}
	if i > j {
		return 0
	}
	if j-i+1 > maxResults {
		tooMany(L, "string.byte", j-i+1)
	}
	for k := i; k <= j; k++ {
		L.Push(lua.LNumber(s[k-1]))
	}
	return j - i + 1
}

// boundedConcat is table.concat with its result bounded, built in one
// buffer (gopher-lua pushes every element on the value stack first).
func boundedConcat(L *lua.LState) int {
	tb := L.CheckTable(1)
	sep := L.OptString(2, "")
	i := L.OptInt(3, 1)
	j := L.OptInt(4, tb.Len())
	if i > j {
		L.Push(lua.LString(""))
		return 1
	}
	total := int64(0)
	for k := i; k <= j; k++ {
		v := tb.RawGetInt(k)
		switch v.(type) {
		case lua.LString, lua.LNumber:
		default:
			L.RaiseError("invalid value (at index %d) in table for 'concat'", k)
		}
		total += int64(len(lua.LVAsString(v)))
		if k < j {
			total += int64(len(sep))
		}
		if total > maxStringBytes {
			L.RaiseCoded("memory", "memory: table.concat: result over %d bytes", maxStringBytes)
		}
	}
	var b strings.Builder
	b.Grow(int(total))
	for k := i; k <= j; k++ {
		b.WriteString(lua.LVAsString(tb.RawGetInt(k)))
		if k < j {
			b.WriteString(sep)
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// checkFormat refuses widths and precisions over two digits and options
// Lua does not have (as Lua does; gopher-lua would hand them to Go's fmt)
// and a result that could be over the string limit: %q writes a byte as
// up to four.
func checkFormat(L *lua.LState) {
	f := L.CheckString(1)
	total := int64(len(f))
	arg := 2
	for k := 0; k < len(f); k++ {
		if f[k] != '%' {
			continue
		}
		k++
		if k < len(f) && f[k] == '%' {
			continue
		}
		digits := 0
		for k < len(f) && strings.IndexByte("-+ #0123456789.", f[k]) >= 0 {
			if f[k] >= '0' && f[k] <= '9' {
				digits++
				if digits > 2 {
					L.RaiseError("invalid format (width or precision too long)")
				}
			} else {
				digits = 0
			}
			k++
		}
		if k >= len(f) || strings.IndexByte("cdiouxXeEfgGqs", f[k]) < 0 {
			L.RaiseError("invalid option '%%%s' to 'format' (write %%%% for a percent sign)", f[k:min(k+1, len(f))])
		}
		if arg > L.GetTop() {
			L.ArgError(arg, "no value")
		}
		if f[k] != 's' && f[k] != 'q' {
			// a number option reads a numeric string as its number, as
			// Lua does (Go's fmt would print "%!f(string=...)")
			L.Replace(arg, L.CheckNumber(arg))
		}
		total += 128
		if s, ok := L.Get(arg).(lua.LString); ok {
			n := int64(len(s))
			if f[k] == 'q' {
				n = 4*n + 2
			}
			total += n
		}
		arg++
	}
	if total > maxStringBytes {
		L.RaiseCoded("memory", "memory: string.format: result over %d bytes", maxStringBytes)
	}
}
