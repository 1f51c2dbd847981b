; error: bind-path.scm:2:10: lambda: a.b is a field path; bind a plain name (without / or .)
(lambda (a.b) a)
