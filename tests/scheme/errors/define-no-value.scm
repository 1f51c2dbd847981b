; error: define-no-value.scm:2:1: define: (define x VALUE) takes exactly one value; to define a function write (define (x ARGS...) BODY...)
(define x)
