; error: call-literal.scm:2:2: "a" is not a function: a call starts with a function, as in (f x)
("a" 1)
