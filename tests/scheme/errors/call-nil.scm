; error: call-nil.scm:2:2: nil is not a function: a call starts with a function, as in (f x)
(nil 1)
