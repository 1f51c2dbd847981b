; quote: symbols become strings, lists become lists
(define name 'tasks)
(define names '(a b c))
(define mixed '(1 "two" #t :key (nested list) ()))
(define nothing '())
(define q (quote x))
(define/reducer 'offload apply)
