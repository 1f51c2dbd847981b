local both, either, neither, t, f, guarded
both = function(a, b) return (a and b) end
either = function(a, b, c) return (a or b or c) end
neither = function(a, b) return (not (a or b)) end
t = true
f = false
if config("a") then notify("a set") end
if not config("b") then notify("b unset") end
guarded = function(x) do local _2 = x; if _2 then local _1; do local y = x.y; _1 = y end; _2 = _1 end; return _2 end end
