; error: if-empty.scm:2:1: if: takes a test, a then-form and an optional else-form: (if TEST THEN ELSE); use cond for more branches and begin for several forms
(if)
