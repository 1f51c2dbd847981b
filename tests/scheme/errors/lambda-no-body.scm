; error: lambda-no-body.scm:2:1: lambda: needs parameters and a body: (lambda (x y) BODY...)
(lambda (x))
