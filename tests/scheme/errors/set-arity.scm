; error: set-arity.scm:2:1: set!: takes a name and a value: (set! NAME VALUE)
(set! x)
