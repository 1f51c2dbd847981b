; error: bad-escape.scm:2:13: unknown escape '\q' in string; use one of \n \t \r \" \\ \a \b \0 \xHEX; or write \\ for a backslash
(notify "tab\q")
