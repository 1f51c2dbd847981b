; error: lambda-rest-param.scm:2:14: define: rest parameters (a . rest) are not supported; pass a list instead
(define (f a . rest) rest)
