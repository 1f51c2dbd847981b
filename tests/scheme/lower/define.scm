; define: values, functions, forward references between top-level functions
(define greeting "hello")
(define answer 42)
(define (square x) (* x x))

(define (even? n)
  (if (= n 0) #t (odd? (- n 1))))
(define (odd? n)
  (if (= n 0) #f (even? (- n 1))))

(define (outer a)
  (define inner-value (* a 2))
  (define (helper b) (+ b inner-value))
  (helper 1))

(define state.count 0)
