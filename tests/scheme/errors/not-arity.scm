; error: not-arity.scm:2:1: not: takes one value: (not X)
(not a b)
