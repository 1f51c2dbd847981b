; error: quote-arity.scm:2:1: quote: takes one form: (quote x), or 'x
(quote a b)
