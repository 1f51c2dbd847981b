
do local _1; do local x = 1; _1 = x end; notify(_1) end
do local _2; do local x = 1; local y = x; _2 = y end; notify(_2) end
do local _3; if f() then _3 = 1 else _3 = 2 end; notify(_3) end
do local _4; if f() then _4 = 1 else _4 = nil end; notify(_4) end
do local _5; if not f() then _5 = 1 else _5 = nil end; notify(_5) end
f(); notify(2)
do local _6; if f() then _6 = g() else _6 = h() end; notify(_6) end
do local _8 = f(); if _8 then local _7; do local y = 1; _7 = y end; _8 = _7 end; notify(_8) end
do local _10 = f(); if not _10 then local _9; do local y = 1; _9 = y end; _10 = _9 end; notify(_10) end
x = 1; notify(nil)
t.k = 1; notify(t)
notify(function() return 1 end)
do local _11; do local loop; loop = function(i) if (i < 3) then return loop((i + 1)) else return i end end; _11 = loop(0) end; notify(_11) end
do local _13 = g(); local _12; do local z = 1; _12 = z end; f(_13, _12, (h())) end
