; goal — keeps the agent looping toward a goal for a bounded number of rounds
; (R6.9).
;
; Owner goal (session): dies with the session and is rolled back with it; a
; child has its own session, so it never inherits its parent's goal.
;
;   state    {text, status, loops}
;   status   "idle" (no goal) | "active" | "exhausted" (no loops left) |
;            "blocked" (a round-end failure stopped it)
;   actions  set {text, loops}, tick, blocked {reason}, cleared
;
; Configuration: loops (a whole number >= 1, default 3), the loops a goal
; set without its own count gets.
;
; Methods of goal:
;   get    query    {}                    -> {text, status, loops}
;   set    command  {text, loops?}        -> {text, loops}
;          text must not be blank; loops defaults to the configuration's.
;   tick   command  {}                    -> {loops}
;          uses one loop of an active goal (the last one exhausts it);
;          fails when the goal is not active or has no loops left.
;   block  command  {reason?}             -> {status}
;          status "blocked" (a goal that is not active stays as it is).
;   clear  command  {}                    -> {status}
;          forgets the goal.
;
; Round-end hook: while the goal is active and loops remain, ticks once and
; emits one activating note "Goal: TEXT (N loops left)". Its :post-fail
; (the hook threw, or a round guard refused the round) blocks the goal.
; /goal TEXT is the pack command commands/goal.scm.

(define default-loops 3)

(validate/configuration
  (lambda (config)
    (let ((loops (get config "loops")))
      (unless (or (= loops nil)
                  (and (= (type loops) "number") (>= loops 1) (= loops (math.floor loops))))
        (error "goal: loops must be a whole number >= 1"))
      #t)))

(define/reducer "goal"
  (lambda (state action)
    (let ((kind (get action "type")))
      (cond
        ((= kind "set")
         (put! state "text" (get action "text"))
         (put! state "loops" (get action "loops"))
         (put! state "status" "active"))
        ((= kind "tick")
         (put! state "loops" (- (get state "loops") 1))
         (when (<= (get state "loops") 0) (put! state "status" "exhausted")))
        ((= kind "blocked") (put! state "status" "blocked"))
        ((= kind "cleared")
         (put! state "text" "")
         (put! state "loops" 0)
         (put! state "status" "idle")))
      state))
  :init (table :text "" :status "idle" :loops 0))

(define (active? state)
  (and (= (get state "status") "active") (> (get state "loops") 0)))

(define/method "goal" "get"
  (lambda (ctx state input) state)
  :output (table :text "string" :status "string" :loops "integer"))

(define/method "goal" "set"
  (lambda (ctx state input)
    (let ((loops (or (get input "loops") (config "loops") default-loops)))
      (when (= (string.match (get input "text") "%S") nil)
        (error "set: a goal needs a text"))
      (when (< loops 1) (error "set: loops must be at least 1"))
      (propose (table :type "set" :text (get input "text") :loops loops))
      (table :text (get input "text") :loops loops)))
  :kind "command"
  :input (table :text "string" :loops "integer?")
  :output (table :text "string" :loops "integer"))

(define/method "goal" "tick"
  (lambda (ctx state input)
    (unless (active? state)
      (error (string-append "tick: the goal is " (get state "status") " with "
                            (tostring (get state "loops")) " loops left")))
    (propose (table :type "tick"))
    (table :loops (- (get state "loops") 1)))
  :kind "command"
  :output (table :loops "integer"))

(define/method "goal" "block"
  (lambda (ctx state input)
    (when (= (get state "status") "active")
      (propose (table :type "blocked" :reason (get input "reason"))))
    (table :status (if (= (get state "status") "active") "blocked" (get state "status"))))
  :kind "command"
  :input (table :reason "string?")
  :output (table :status "string"))

(define/method "goal" "clear"
  (lambda (ctx state input)
    (propose (table :type "cleared"))
    (table :status "idle"))
  :kind "command"
  :output (table :status "string"))

(hook/round "end"
  (lambda (boundary)
    (let ((goal (call/method "goal" "get" (table))))
      (when (active? goal)
        (let ((left (get (call/method "goal" "tick" (table)) "loops")))
          (notify (string-append "Goal: " (get goal "text") " (" (tostring left) " loops left)")
                  "activating")))))
  :post-fail
  (lambda (boundary failure)
    (call/method "goal" "block" (table :reason (or (get failure "error") (get failure "reason"))))))
