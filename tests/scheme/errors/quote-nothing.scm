; error: quote-nothing.scm:2:7: a quote ' must be followed by a form, as in 'name or '(a b)
(list ')
