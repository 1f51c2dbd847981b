; the register forms of the form signatures, as a program would write them
(require "other")
(validate/configuration
  (lambda (config)
    (if (get config :limit) #t (begin #f))))
(define/tool "tasks/list"
  (lambda (ctx args) (list))
  :effect (list "read")
  :input (table :owner "string?")
  :output (table :items "list"))
(guard/tool "fs/**"
  (lambda (call invoke)
    (if (get call :args) (invoke) (refuse "no args")))
  :reentrant-depth 1)
(guard/turn (lambda (boundary invoke) (invoke)))
(guard/round (lambda (boundary invoke) (invoke)))
(hook/tool "fs/*"
  :pre (lambda (call) nil)
  :post (lambda (call outcome) "checked")
  :post-fail (lambda (call failure) nil)
  :reentrant-depth 2)
(hook/turn "start" (lambda (boundary) nil))
(hook/round "end"
  (lambda (boundary) (notify "tick" "activating"))
  :post-fail (lambda (boundary failure) nil))
(define/reducer "tasks"
  (lambda (state action) state)
  :scope (list "session" "project")
  :revision 2
  :abi "1"
  :init (table :items (list))
  :protected (list "stamp" "limbo")
  :migrate (table :1 (lambda (action) action)))
(define/method "tasks" "incomplete"
  (lambda (ctx state input) #f)
  :kind "query"
  :input (table)
  :output (table :status "any"))
(define/method "tasks@project" "accept"
  (lambda (ctx state input) (propose (table :type "accept")))
  :kind "command"
  :grant "tasks.accept")
(define/command (lambda (ctx text) (notify text)))
(subscribe "tasks" (lambda (ctx action) nil))
