; error: when-no-body.scm:2:1: when: needs a test and a body: (when TEST BODY...)
(when x)
