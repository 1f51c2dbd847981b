; error: bad-hash.scm:2:5: bad # syntax "#x": only #t (true) and #f (false) are supported
(if #x 1 2)
