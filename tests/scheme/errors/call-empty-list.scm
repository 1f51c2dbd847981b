; error: call-empty-list.scm:4:6: () is not a function: a call starts with a function, as in (f x)
(hook/round "end"
  (lambda (b)
    (())))
