; strings: escapes, multi-line strings, string-append, length
(define s "tab\there \"quoted\" back\\slash")
(define multi "line one
line two")
(define joined (string-append "a" s "b"))
(define none (string-append))
(define only (string-append s))
(define n (length s))
(define k (length (list 1 2)))
(define u (string.upper "x"))
(define unicode "caf\xe9; and ☃")
(define cont "one \
              two")
