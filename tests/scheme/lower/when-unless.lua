local function _null_p(x) return x == nil or (type(x) == "table" and next(x) == nil) end; local check, flag
if config("debug") then
  notify("debug", "ambient")
  notify("more") end
if not config("quiet") then
  notify("not quiet") end
check = function(x)
  if _null_p(x) then
    return error("x is empty") end end
if not false then flag = 2 else flag = nil end
