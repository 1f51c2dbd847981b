; error: let-star-bad-binding.scm:2:8: let*: each binding is (NAME VALUE), as in (let* ((x 1)) BODY...); got (x)
(let* ((x)) x)
