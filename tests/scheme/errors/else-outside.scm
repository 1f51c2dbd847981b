; error: else-outside.scm:2:1: else: only as the test of the last clause of cond: (cond ... (else BODY...))
(else 1)
