; error: define-no-value.scm:2:1: define: x needs a value: (define x VALUE)
(define x)
