; and, or, not: values, statements, operands that need statements
(define (both a b) (and a b))
(define (either a b c) (or a b c))
(define (neither a b) (not (or a b)))
(define t (and))
(define f (or))
(and (config "a") (notify "a set"))
(or (config "b") (notify "b unset"))
(define (guarded x) (and x (let ((y (get x :y))) y)))
