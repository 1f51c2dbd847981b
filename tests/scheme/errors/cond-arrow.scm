; error: cond-arrow.scm:2:19: cond: (TEST => F) clauses are not supported; bind the test with let and call F yourself
(cond ((get t :f) => run))
