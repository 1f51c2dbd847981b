; error: cond-empty.scm:2:1: cond: needs at least one clause: (cond (TEST BODY...) ... (else BODY...))
(cond)
