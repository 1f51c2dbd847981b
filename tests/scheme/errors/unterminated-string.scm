; error: unterminated-string.scm:2:9: unterminated string: add a closing '"' to the string opened here
(notify "hello
  world)
