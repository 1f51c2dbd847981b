local greeting, answer, square, even_p, odd_p, outer
greeting = "hello"
answer = 42
square = function(x) return (x * x) end

even_p = function(n)
  if (n == 0) then return true else return odd_p((n - 1)) end end
odd_p = function(n)
  if (n == 0) then return false else return even_p((n - 1)) end end

outer = function(a)
  local inner_value, helper; inner_value = (a * 2)
  helper = function(b) return (b + inner_value) end
  return helper(1) end

state.count = 0
