; error: minus-empty.scm:2:1: -: needs at least one number: (- X Y ...)
(-)
