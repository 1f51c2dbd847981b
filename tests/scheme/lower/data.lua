local empty, xs, ys, m, n, lookup, args, first, store, store_and_return, fresh
empty = list()
xs = {1, 2, 3}
ys = {"a", "b", (f())}
m = {name = "x", post_fail = 1, ["1"] = "one", ["end"] = 2, k = 3}
n = {}
lookup = function(t, k) return t[k] end
args = function(call) return call.args end
first = function(xs) return xs[1] end
store = function(t) t.count = 1; return t end
store_and_return = function(t) t.key = (1 + 2); return t end;
({}).x = 1
do local _1 = {}; _1.y = 2; fresh = _1 end
