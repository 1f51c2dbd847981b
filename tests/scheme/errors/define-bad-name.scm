; error: define-bad-name.scm:2:9: define: 5 is not a name: (define NAME VALUE) or (define (NAME ARGS...) BODY...)
(define 5 1)
