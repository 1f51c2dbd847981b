; error: bind-special.scm:2:8: let: if is a special form and cannot be bound; choose another name
(let ((if 1)) if)
