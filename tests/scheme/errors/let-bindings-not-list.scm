; error: let-bindings-not-list.scm:2:1: let: a named let needs bindings and a body: (let NAME ((VAR INIT) ...) BODY...)
(let x)
