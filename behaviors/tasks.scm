; tasks — a notebook of tasks, each with a validation program (R6.1-R6.5).
;
; Owner tasks (session) and owner tasks@project: one reducer, two scopes,
; each its own log. Session methods are declared on tasks@session, project
; methods on tasks@project, so neither scope answers the other's methods.
;
;   state    {tasks = {ID = task}, order = [ID ...], next = N}
;   task     {id, title, validation, status, waits = [ID ...], verdict?, reason?}
;   status   "pending" (created, not started) | "open" (started: the open
;            page) | "done" | "failed" (stamped) | "limbo" | "dropped"
;   project  row {id, title, session, status = "accepted" | "complete"}
;   actions  created, started, stamp, limbo, dropped, after (session);
;            accepted, completed (project). stamp and limbo are protected:
;            only a call with host authority appends them (R6.4).
;
; Methods of tasks (session):
;   incomplete  query    {}                                  -> "open" | "pending" | #f
;               "open" when a started task exists, "pending" when only
;               tasks not yet started exist, #f otherwise.
;   create      command  {title, validation, id?}            -> {id}
;               validation is Scheme-style source text. It is read as forms
;               (read/forms), never searched as text: it must call a tree/...
;               tool and call tasks/write-completion-verdict, else create
;               refuses. A call is a list form (call/tool "PATH" ...) whose
;               path is a string literal, or a list form whose head symbol is
;               PATH itself ((tasks/write-completion-verdict ...)). A tree
;               call names a path that starts with "tree/" and goes on. Forms
;               inside (quote ...) are data, not calls; strings and comments
;               are never calls. id defaults to "tN", the next free number.
;   start       command  {id}                                -> {id, status}
;               pending -> open. Fails while another page is open or while a
;               task it waits for (see after) is pending or open.
;   stamp       command  {id, verdict, reason?}              -> {id, status}
;               host-sealed. verdict "pass" -> done, "fail" -> failed (both
;               append action stamp; the task must be open), "limbo" ->
;               limbo (appends action limbo; open or pending). Either closes
;               the page.
;   drop        command  {id, reason?}                       -> {id, status}
;               pending or open -> dropped (closes the page).
;   after       command  {id, then}                          -> {id, then}
;               task then waits for task id: it cannot start until id is
;               closed. then must be pending; a cycle fails.
;   validate    query    {id}                                -> {id, title, validation, status}
;               hands the host the task's validation program, which the host
;               runs (for instance in an examiner) and whose verdict it
;               stamps with host authority.
;
; Methods of tasks@project:
;   accept      command  {id}                                -> {id, status}
;               records that the project took on the caller's session task
;               id (same id in both owners; the title is read from the
;               session). Acceptance is not completion: the session task is
;               untouched. Accepting again from the same session changes
;               nothing; an id accepted from another session fails.
;   complete    command  {id}                                -> {id, status}
;               accepted -> complete. Nothing else changes it. A session
;               rollback never touches these rows (R5.9).
;
; Round-end hook (R6.3): asks incomplete; "open" gives an activating note,
; "pending" an ambient note, #f nothing. It runs in every instance whose bot
; selects tasks (the foreground, usually), on that instance's own session.

(define/reducer "tasks"
  (lambda (state action)
    (let* ((kind (get action "type"))
           (tasks (get state "tasks"))
           (task (get tasks (get action "id"))))
      (cond
        ((= kind "created")
         (put! tasks (get action "id")
               (table :id (get action "id") :title (get action "title")
                      :validation (get action "validation")
                      :status "pending" :waits (list)))
         (table.insert (get state "order") (get action "id"))
         (put! state "next" (+ (get state "next") 1)))
        ((= kind "started") (put! task "status" "open"))
        ((= kind "stamp")
         (put! task "status" (if (= (get action "verdict") "pass") "done" "failed"))
         (put! task "verdict" (get action "verdict"))
         (put! task "reason" (get action "reason")))
        ((= kind "limbo")
         (put! task "status" "limbo")
         (put! task "reason" (get action "reason")))
        ((= kind "dropped")
         (put! task "status" "dropped")
         (put! task "reason" (get action "reason")))
        ((= kind "after")
         (table.insert (get (get tasks (get action "then")) "waits") (get action "id")))
        ((= kind "accepted")
         (put! tasks (get action "id")
               (table :id (get action "id") :title (get action "title")
                      :session (get action "session") :status "accepted"))
         (table.insert (get state "order") (get action "id")))
        ((= kind "completed") (put! task "status" "complete")))
      state))
  :scope (list "session" "project")
  :init (table :tasks (table) :order (list) :next 0)
  :protected (list "stamp" "limbo"))

; ---- reading a validation program as forms (R6.2) ----

; read/forms gives symbols as plain strings, keywords as ":name", string
; literals as {string = "..."}, lists as lists.
(define (symbol-form? x) (= (type x) "string"))
(define (literal x) (if (= (type x) "table") (get x "string") nil))
(define (list-form? x) (and (= (type x) "table") (= (get x "string") nil)))

; The name a list form calls: the literal path of (call/tool "PATH" ...), or
; the head symbol of any other call; nil when it names none.
(define (called form)
  (let ((head (get form 1)))
    (cond ((not (symbol-form? head)) nil)
          ((= head "call/tool") (literal (get form 2)))
          (else head))))

(define (tree-path? name)
  (and (> (length name) 5) (= (string.sub name 1 5) "tree/")))

; scan marks seen.tree and seen.verdict for the calls in form and below it.
(define (scan form seen)
  (when (and (list-form? form) (not (= (get form 1) "quote")))
    (let ((name (called form)))
      (when (and name (tree-path? name)) (put! seen "tree" #t))
      (when (= name "tasks/write-completion-verdict") (put! seen "verdict" #t)))
    (fold (lambda (item acc) (scan item acc) acc) seen form))
  seen)

; validation-problem is nil for an acceptable program, else the reason.
(define (validation-problem text)
  (let ((forms (read/forms text)))
    (if (get forms "error")
        (string-append "the validation program cannot be read as forms: " (get forms "error"))
        (let ((seen (fold (lambda (form acc) (scan form acc)) (table) forms)))
          (cond ((not (get seen "tree"))
                 "the validation program never calls a tree/... tool (read as forms; strings and comments do not count)")
                ((not (get seen "verdict"))
                 "the validation program never calls tasks/write-completion-verdict (read as forms; strings and comments do not count)")
                (else nil))))))

; ---- helpers over the folded state ----

(define (task-of state id)
  (let ((task (get (get state "tasks") id)))
    (when (= task nil) (error (string-append "tasks: no task " (tostring id))))
    task))

(define (closed? task)
  (not (or (= (get task "status") "pending") (= (get task "status") "open"))))

(define (open-task state)
  (fold (lambda (id acc)
          (if (= (get (get (get state "tasks") id) "status") "open") id acc))
        nil (get state "order")))

(define (fresh-id state)
  (let loop ((n (+ (get state "next") 1)))
    (let ((id (string-append "t" (tostring n))))
      (if (= (get (get state "tasks") id) nil) id (loop (+ n 1))))))

; does task a wait for task b, directly or through other tasks?
(define (waits-on? state a b)
  (fold (lambda (w acc) (or acc (= w b) (waits-on? state w b)))
        #f (get (task-of state a) "waits")))

(define (status-of task) (table :id (get task "id") :status (get task "status")))

; ---- session methods ----

(define/method "tasks@session" "incomplete"
  (lambda (ctx state input)
    (let ((statuses (map (lambda (id) (get (get (get state "tasks") id) "status"))
                         (get state "order"))))
      (cond ((fold (lambda (s acc) (or acc (= s "open"))) #f statuses) "open")
            ((fold (lambda (s acc) (or acc (= s "pending"))) #f statuses) "pending")
            (else #f)))))

(define/method "tasks@session" "create"
  (lambda (ctx state input)
    (let ((problem (validation-problem (get input "validation")))
          (id (or (get input "id") (fresh-id state))))
      (cond
        (problem (refuse (string-append "create: " problem)))
        (else
          (when (= (get input "title") "") (error "create: a task needs a title"))
          (unless (= (get (get state "tasks") id) nil)
            (error (string-append "create: task " id " exists already")))
          (propose (table :type "created" :id id :title (get input "title")
                          :validation (get input "validation")))
          (table :id id)))))
  :kind "command"
  :input (table :title "string" :validation "string" :id "string?")
  :output (table :id "string"))

(define/method "tasks@session" "start"
  (lambda (ctx state input)
    (let* ((task (task-of state (get input "id")))
           (open (open-task state)))
      (unless (= (get task "status") "pending")
        (error (string-append "start: task " (get task "id") " is " (get task "status") ", not pending")))
      (when open
        (error (string-append "start: task " open " is the open page; stamp or drop it first")))
      (map (lambda (w)
             (unless (closed? (task-of state w))
               (error (string-append "start: task " (get task "id") " waits for task " w))))
           (get task "waits"))
      (propose (table :type "started" :id (get task "id")))
      (table :id (get task "id") :status "open")))
  :kind "command"
  :input (table :id "string")
  :output (table :id "string" :status "string"))

(define/method "tasks@session" "stamp"
  (lambda (ctx state input)
    (let* ((task (task-of state (get input "id")))
           (verdict (get input "verdict"))
           (status (get task "status")))
      (cond
        ((= verdict "limbo")
         (when (closed? task)
           (error (string-append "stamp: task " (get task "id") " is " status " already")))
         (propose (table :type "limbo" :id (get task "id") :reason (get input "reason")))
         (table :id (get task "id") :status "limbo"))
        ((or (= verdict "pass") (= verdict "fail"))
         (unless (= status "open")
           (error (string-append "stamp: task " (get task "id") " is " status ", not open")))
         (propose (table :type "stamp" :id (get task "id") :verdict verdict :reason (get input "reason")))
         (table :id (get task "id") :status (if (= verdict "pass") "done" "failed")))
        (else (error (string-append "stamp: verdict must be pass, fail or limbo, got " verdict))))))
  :kind "command"
  :input (table :id "string" :verdict "string" :reason "string?")
  :output (table :id "string" :status "string"))

(define/method "tasks@session" "drop"
  (lambda (ctx state input)
    (let ((task (task-of state (get input "id"))))
      (when (closed? task)
        (error (string-append "drop: task " (get task "id") " is " (get task "status") " already")))
      (propose (table :type "dropped" :id (get task "id") :reason (get input "reason")))
      (table :id (get task "id") :status "dropped")))
  :kind "command"
  :input (table :id "string" :reason "string?")
  :output (table :id "string" :status "string"))

(define/method "tasks@session" "after"
  (lambda (ctx state input)
    (let ((first (task-of state (get input "id")))
          (then (task-of state (get input "then"))))
      (when (= (get first "id") (get then "id"))
        (error "after: a task cannot wait for itself"))
      (unless (= (get then "status") "pending")
        (error (string-append "after: task " (get then "id") " is " (get then "status") ", not pending")))
      (when (waits-on? state (get first "id") (get then "id"))
        (error (string-append "after: task " (get first "id") " already waits for task " (get then "id"))))
      (propose (table :type "after" :id (get first "id") :then (get then "id")))
      (table :id (get first "id") :then (get then "id"))))
  :kind "command"
  :input (table :id "string" :then "string")
  :output (table :id "string" :then "string"))

(define/method "tasks@session" "validate"
  (lambda (ctx state input)
    (let ((task (task-of state (get input "id"))))
      (table :id (get task "id") :title (get task "title")
             :validation (get task "validation") :status (get task "status"))))
  :input (table :id "string")
  :output (table :id "string" :title "string" :validation "string" :status "string"))

; ---- project methods ----

(define/method "tasks@project" "accept"
  (lambda (ctx state input)
    (let* ((id (get input "id"))
           (task (call/method "tasks@session" "validate" (table :id id)))
           (row (get (get state "tasks") id)))
      (cond
        ((= row nil)
         (propose (table :type "accepted" :id id :title (get task "title") :session (get ctx "session")))
         (table :id id :status "accepted"))
        ((= (get row "session") (get ctx "session")) (status-of row))
        (else (error (string-append "accept: task " id " was accepted from session " (get row "session")))))))
  :kind "command"
  :input (table :id "string")
  :output (table :id "string" :status "string"))

(define/method "tasks@project" "complete"
  (lambda (ctx state input)
    (let ((row (task-of state (get input "id"))))
      (when (= (get row "status") "accepted")
        (propose (table :type "completed" :id (get row "id"))))
      (table :id (get row "id") :status "complete")))
  :kind "command"
  :input (table :id "string")
  :output (table :id "string" :status "string"))

; ---- the round-end hook (R6.3) ----

(hook/round "end"
  (lambda (boundary)
    (let ((page (call/method "tasks" "incomplete" (table))))
      (cond
        ((= page "open")
         (notify "tasks: a task is open. Keep working on it until its validation can pass, or drop it." "activating"))
        ((= page "pending")
         (notify "tasks: tasks are pending, none started. Start one when you take it up." "ambient"))))))
