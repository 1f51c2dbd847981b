; error: define-in-expression.scm:2:9: define: only at the top level or directly in a body (of lambda, let, let*, begin, when, unless or a cond clause); to change a variable use (set! NAME VALUE)
(notify (define x 1))
