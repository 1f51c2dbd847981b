
hook.tool("fs/*", {pre = f, post_fail = g})
define.reducer(tasks, apply, {scope = {"session", "project"}, migrate = {["1"] = m}})
call.method("tasks", "create", {title = "x"})
string.upper("x")
error("msg")
notify("x", "ambient")
reset_x(state)
done_p(task)
f(a, b, {k = v})
do local _1 = g(); local _2 = h(); local _3 = i(); f(_1, _3, {k = _2}) end
f({reentrant_depth = 2})
end_(function_, local_, repeat_)
a__gtb(x_stary, _lt_eq_gt, _pctp, _dollarx, _aty)
f((g()))
t.f(1)
do local _4; if a then _4 = f else _4 = g end; _4(1) end
