; error: get-arity.scm:2:1: get: takes a table and a key: (get TABLE KEY), as in (get call :args)
(get t)
