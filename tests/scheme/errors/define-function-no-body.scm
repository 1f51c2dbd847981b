; error: define-function-no-body.scm:2:1: define: (f x) needs a body: (define (f x) BODY...)
(define (f x))
