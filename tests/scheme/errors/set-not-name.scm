; error: set-not-name.scm:2:7: set!: 5 is not a name; write a name such as x or state.count
(set! 5 1)
