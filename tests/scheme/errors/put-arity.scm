; error: put-arity.scm:2:1: put!: takes a table, a key and a value: (put! TABLE KEY VALUE)
(put! t k)
