; error: let-duplicate.scm:2:14: let: x is bound twice; use let* to bind in sequence
(let ((x 1) (x 2)) x)
