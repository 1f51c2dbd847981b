; error: special-as-value.scm:2:6: if: is a special form, not a value; to pass it as a function wrap it, as in (lambda (x y) (if x y))
(map if xs)
