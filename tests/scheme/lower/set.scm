; set! on variables and fields
(define count 0)
(define (bump!)
  (set! count (+ count 1)))
(define state (table :n 0))
(set! state.n 5)
(set! count (if (> count 10) 0 count))
(define (reset!) (set! count 0) count)
