; error: let-no-body.scm:2:1: let: needs bindings and a body: (let ((NAME VALUE) ...) BODY...)
(let ((x 1)))
