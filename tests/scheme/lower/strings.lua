local function _length(x) local t = type(x) if t ~= "table" and t ~= "string" then error("length: want a list or a string, got " .. t, 3) end return #x end; local s, multi, joined, none, only, n, k, u, unicode, cont
s = "tab\there \"quoted\" back\\slash"
multi = "line one\nline two"

joined = ("a" .. s .. "b")
none = ""
only = s
n = _length(s)
k = _length({1, 2})
u = string.upper("x")
unicode = "café and ☃"
cont = "one two"
