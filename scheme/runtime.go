package scheme

import "strings"

// The runtime helpers are small Lua functions that lowered code calls for
// map, filter, fold, null? and length. Lower emits the ones a program uses as
// locals on line 1. They use only the base library and the engine's global
// list, and report misuse at the caller's line. gopher-lua counts error
// levels from the error function's own frame, so the caller of a helper is
// level 3 there (level 2 in C Lua); TestTraceLines pins this. Lowered code
// never calls a helper in tail position, so that frame exists.
var helperOrder = []string{"length", "null?", "map", "filter", "fold"}

var helperBodies = map[string]string{
	"length": `(x) local t = type(x) if t ~= "table" and t ~= "string" then error("length: want a list or a string, got " .. t, 3) end return #x end`,
	"null?":  `(x) return x == nil or (type(x) == "table" and next(x) == nil) end`,
	"map": `(f, xs) if type(xs) ~= "table" then error("map: want a list, got " .. type(xs), 3) end` +
		` if type(f) ~= "function" then error("map: want a function, got " .. type(f), 3) end` +
		` local out = list() for i = 1, #xs do out[i] = f(xs[i]) end return out end`,
	"filter": `(f, xs) if type(xs) ~= "table" then error("filter: want a list, got " .. type(xs), 3) end` +
		` if type(f) ~= "function" then error("filter: want a function, got " .. type(f), 3) end` +
		` local out, n = list(), 0 for i = 1, #xs do local x = xs[i] if f(x) then n = n + 1 out[n] = x end end return out end`,
	"fold": `(f, acc, xs) if type(xs) ~= "table" then error("fold: want a list, got " .. type(xs), 3) end` +
		` if type(f) ~= "function" then error("fold: want a function, got " .. type(f), 3) end` +
		` for i = 1, #xs do acc = f(xs[i], acc) end return acc end`,
}

// helperSource is the Lua definition of helper h under the local name name.
func helperSource(h, name string) string {
	return "local function " + name + strings.TrimSpace(helperBodies[h])
}
