local f, g, swap, sum_to, empty_let
f = function(x)
  do local a, b = 1,
           (x + 1)
    return (a + b) end end
g = function(x)
  do local a = (x * 2)
         local b = (a + 1)
    return {a, b} end end
swap = function(x, y)
  do local x, y = y, x; return {x, y} end end
sum_to = function(n)
  do local loop; loop = function(i, acc)
    if (i > n) then
        return acc else
        return loop((i + 1), (acc + i)) end end; return loop(1, 0) end end
empty_let = function() do return 5 end end
