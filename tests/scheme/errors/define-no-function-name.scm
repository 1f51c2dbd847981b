; error: define-no-function-name.scm:2:9: define: the function's name is missing: (define (NAME ARGS...) BODY...)
(define () 1)
