; error: lambda-duplicate-param.scm:2:12: lambda: parameter x appears twice
(lambda (x x) x)
