; error: brackets.scm:2:6: unexpected '[': lists are written with ( and )
(let [(x 1)] x)
