; error: fold-arity.scm:2:1: fold: takes 3 argument(s): (fold FUNCTION INIT LIST), which calls (FUNCTION item acc)
(fold f xs)
