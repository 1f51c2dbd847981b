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
do local _1 = (1 < 2 and 2 < 3); lt = _1 end
gt = (3 > 2)
le = (a <= b)
do local _2 = (a >= b and b >= c); ge = _2 end
do local _3 = f(); local _4 = g(); local _5 = h(); local _6 = (_3 < _4 and _4 < _5); chain = _6 end
neg = (-1.5 - 2000)
