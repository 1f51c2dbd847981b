local classify, status, first_true, label
classify = function(n)
  if (n < 0) then return "negative"
        elseif (n == 0) then return "zero"
        elseif (n < 10) then return "small" else
              return "large" end end
status = function(s)
  if s.done then return "done" else
         local _1; if s.started then _1 = s.open else _1 = nil end; if _1 then return "open" else
              return "pending" end end end
first_true = function(a, b)
  if a then return a
        elseif b then return b end end
if config("x") then label = "x" else label = "none" end
notify("always")
