; error: table-odd.scm:2:13: table: :b has no value; write (table KEY VALUE ...), as in (table :name "x")
(table :a 1 :b)
