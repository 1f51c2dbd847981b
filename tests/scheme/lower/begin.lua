local a, b, f, h, v

  a = 1
  b = 2
f = function(x)
  notify("side"); return g(x) end
h = function(x)
  if x then notify("yes"); return 1 else notify("no"); return 2 end end
v = nil
