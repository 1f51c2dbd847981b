; error: cond-else-not-last.scm:2:7: cond: else must be the last clause
(cond (else 1) (x 2))
