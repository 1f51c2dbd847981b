; map, filter, fold and null? use runtime helpers emitted on line 1
(define doubled (map (lambda (x) (* x 2)) (list 1 2 3)))
(define evens (filter (lambda (x) (= (math.fmod x 2) 0)) (list 1 2 3 4)))
(define total (fold (lambda (x acc) (+ x acc)) 0 (list 1 2 3)))
(define empty? (null? (list)))
(define lengths (map length (list "a" "bb")))
