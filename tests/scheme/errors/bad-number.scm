; error: bad-number.scm:2:11: bad number "12abc": write digits with an optional sign, fraction and exponent, as in -12, 3.5 or 1e6
(define x 12abc)
