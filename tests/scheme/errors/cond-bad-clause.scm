; error: cond-bad-clause.scm:2:7: cond: each clause is a list (TEST BODY...); got x
(cond x)
