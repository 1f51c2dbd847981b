; error: bind-nil.scm:2:9: define: nil cannot be assigned; choose another name
(define nil 1)
