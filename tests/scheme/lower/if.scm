; if as statement, as return value and as an argument
(define (sign n)
  (if (< n 0)
      -1
      (if (= n 0) 0 1)))
(if (config "verbose") (notify "verbose on"))
(notify (if (config "loud") "LOUD" "quiet"))
(define (pick c a b) (f (if c a b)))
(define (maybe c) (if c (g)))
