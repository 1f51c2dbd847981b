; error: cond-else-no-body.scm:2:13: cond: else needs a body: (else BODY...)
(cond (x 1) (else))
