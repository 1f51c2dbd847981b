; error: keyword-no-name.scm:2:4: ':' must be followed by a name, as in :key
(f : 1)
