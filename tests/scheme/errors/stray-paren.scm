; error: stray-paren.scm:2:13: unexpected ')': it closes no list; remove it or add the '(' it belongs to
(define x 1))
