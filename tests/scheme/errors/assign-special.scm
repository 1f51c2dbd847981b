; error: assign-special.scm:2:7: set!: list is a special form and cannot be assigned; choose another name
(set! list 1)
