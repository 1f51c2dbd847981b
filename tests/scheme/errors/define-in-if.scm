; error: define-in-if.scm:2:21: define: only at the top level or directly in a body (of lambda, let, let*, begin, when, unless or a cond clause); to change a variable use (set! NAME VALUE)
(define (f c) (if c (define x 1) 2))
