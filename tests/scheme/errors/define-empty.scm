; error: define-empty.scm:2:1: define: needs a name and a value: (define NAME VALUE) or (define (NAME ARGS...) BODY...)
(define)
