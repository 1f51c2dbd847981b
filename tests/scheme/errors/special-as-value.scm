; error: special-as-value.scm:2:6: if: a special form cannot be passed as a value; wrap it in a lambda, as in (lambda (a b) (if a b))
(map if xs)
