local sign, pick, maybe
sign = function(n)
  if (n < 0) then
      return -1 else
      if (n == 0) then return 0 else return 1 end end end
if config("verbose") then notify("verbose on") end
notify((config("loud") and "LOUD" or "quiet"))
pick = function(c, a, b) do local _1; if c then _1 = a else _1 = b end; return f(_1) end end
maybe = function(c) if c then return g() end end
