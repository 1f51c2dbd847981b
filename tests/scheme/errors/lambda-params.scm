; error: lambda-params.scm:2:9: lambda: parameters are a list of names, as in (lambda (x y) BODY...)
(lambda x x)
