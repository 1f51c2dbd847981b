local count, bump_x, state, reset_x
count = 0
bump_x = function()
  count = (count + 1); return nil end
state = {n = 0}
state.n = 5
if (count > 10) then count = 0 else count = count end
reset_x = function() count = 0; return count end
