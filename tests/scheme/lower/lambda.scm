; lambda: parameters, bodies, the last form is the value
(define add (lambda (a b) (+ a b)))
(define noisy
  (lambda (x)
    (notify "called" "ambient")
    (notify "twice")
    x))
(define (make-counter)
  (let ((n 0))
    (lambda ()
      (set! n (+ n 1))
      n)))
((lambda (x) x) 1)
(define (ignore) (lambda (_) nil))
