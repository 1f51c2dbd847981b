; error: bad-hex-escape.scm:2:10: bad \x escape: write \x, hex digits and ';', as in \x41; for A
(notify "\x41")
