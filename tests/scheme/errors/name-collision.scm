; error: name-collision.scm:3:9: x-p and x? (at 2:9) both become the Lua name x_p; rename one of them
(define x? 1)
(define x-p 2)
