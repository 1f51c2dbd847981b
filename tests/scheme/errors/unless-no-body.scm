; error: unless-no-body.scm:2:1: unless: needs a test and a body: (unless TEST BODY...)
(unless x)
