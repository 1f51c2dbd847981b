; begin splices at the top level, yields its last value elsewhere
(begin
  (define a 1)
  (define b 2))
(define (f x)
  (g (begin (notify "side") x)))
(define (h x)
  (if x (begin (notify "yes") 1) (begin (notify "no") 2)))
(define v (begin))
