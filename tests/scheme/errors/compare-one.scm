; error: compare-one.scm:2:1: <: needs at least two values to compare: (< A B)
(< 1)
