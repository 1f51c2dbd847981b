; error: quasiquote.scm:2:7: unexpected '`': quasiquote and unquote are not supported; build the value with (list ...)
(list `a)
