; Every register form of the form signatures (docs/forms.md), written in the
; Scheme-style forms. register.lua is the same program in Lua; both must
; register the same declarations.
(require "offload")
(validate/configuration
  (lambda (config)
    (if (get config :limit) #t #f)))
(define/tool "tasks/list"
  (lambda (ctx args) (list))
  :effect (list "read")
  :input (table :owner "string?")
  :output (table :items "list"))
(guard/tool "fs/**"
  (lambda (call invoke) (invoke))
  :reentrant-depth 1)
(guard/turn (lambda (boundary invoke) (invoke)))
(guard/round (lambda (boundary invoke) (refuse "closed")))
(hook/tool "fs/*"
  :pre (lambda (call) nil)
  :post (lambda (call outcome) "checked")
  :post-fail (lambda (call failure) nil)
  :reentrant-depth 2)
(hook/turn "start" (lambda (boundary) (notify "hello" "ambient")))
(hook/round "end"
  (lambda (boundary) nil)
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
(define limit (config "limit"))
(define/tool (string-append "tasks/" "count")
  (lambda (ctx args) limit)
  :effect (list))
(define/reducer 'offload
  (lambda (state action) state)
  :scope (list "project" "global"))
