; error: lambda-param-not-name.scm:2:12: lambda: "y" is not a name; bind a name such as x or task-id
(lambda (x "y") x)
