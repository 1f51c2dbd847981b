; error: unclosed-list.scm:2:1: unclosed list: add a ')' to close the '(' opened here
(define (f x)
  (+ x 1)
