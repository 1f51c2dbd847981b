; error: let-bad-binding.scm:2:7: let: each binding is (NAME VALUE), as in (let ((x 1)) BODY...); got x
(let (x) x)
