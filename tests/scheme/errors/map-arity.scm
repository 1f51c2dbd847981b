; error: map-arity.scm:2:1: map: takes 2 argument(s): (map FUNCTION LIST)
(map f)
