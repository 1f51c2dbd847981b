local add, noisy, make_counter, ignore
add = function(a, b) return (a + b) end

  noisy = function(x)
    notify("called", "ambient")
    notify("twice")
    return x end
make_counter = function()
  do local n = 0
    return function()
      n = (n + 1)
      return n end end end;
(function(x) return x end)(1)
ignore = function() return function(_) return nil end end
