local a, b, c, d, e, r, z, one, same, eq, lt, gt, le, ge, chain, neg
a = (1 + 2 + 3)
b = (10 - 3 - 2)
c = (- 5)
d = (2 * 3 * 4)
e = (12 / 2 / 3)
r = (1 / 4)
z = 0
one = 1
same = 7
eq = (a == 6)
lt = (1 < 2 and 2 < 3)
gt = (3 > 2)
le = (a <= b)
ge = (a >= b and b >= c)
do local _1 = f(); local _2 = g(); local _3 = h(); chain = (_1 < _2 and _2 < _3) end
neg = (-1.5 - 2000)
