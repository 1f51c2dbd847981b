; fusion — walks a plan one step per round, recalling what offload memory
; knows about each step (R6.10).
;
; Owner fusion (session): the plan dies with the session and is rolled back
; with it; the offload memory it reads is a project owner and survives both.
;
;   state    {text, status, steps, recall}
;   text     the plan as written (/plan TEXT), trimmed
;   steps    the steps not yet taken, in order: the lines of text, or its
;            parts between ';', trimmed, blank ones dropped
;   status   "idle" (no plan) | "active" | "done" (every step taken) |
;            "blocked" (a round-end failure stopped it)
;   recall   the body of the last offload entry a step recalled (absent
;            until one does)
;   actions  planned {text, steps}, advanced {recall?}, blocked {reason},
;            cleared
;
; Methods of fusion:
;   get      query    {}               -> {text, status, steps, recall?}
;   plan     command  {text}           -> {steps}
;            sets the plan (steps: how many); a blank text clears it (0).
;   advance  command  {recall?}        -> {steps}
;            takes the current step (steps: how many remain) and stores
;            recall when given; the last step makes the plan done.
;   block    command  {reason?}        -> {status}
;            status "blocked" (a plan that is not active stays as it is).
;
; Requires the program offload in the same pin.
;
; Round-end hook: reads the plan; when it is active, calls offload search
; for the current step (the bot needs the grant offload.search), advances
; one step and emits one activating note: on a miss the plan text; on a hit
; the plan text and the fact, which is stored as recall. An idle, done or blocked plan is silent. Its
; :post-fail (the search was refused or failed, or a round guard refused the
; round) blocks the plan without advancing it.
;
; Fusion registers no subscription and no tool guard or hook, and never
; calls put-memory. /plan TEXT is the pack command commands/plan.scm.

(require "offload")

(define/reducer "fusion"
  (lambda (state action)
    (let ((kind (get action "type")))
      (cond
        ((= kind "planned")
         (put! state "text" (get action "text"))
         (put! state "steps" (get action "steps"))
         (put! state "status" "active")
         (put! state "recall" nil))
        ((= kind "advanced")
         (table.remove (get state "steps") 1)
         (unless (= (get action "recall") nil) (put! state "recall" (get action "recall")))
         (when (null? (get state "steps")) (put! state "status" "done")))
        ((= kind "blocked") (put! state "status" "blocked"))
        ((= kind "cleared")
         (put! state "text" "")
         (put! state "steps" (list))
         (put! state "status" "idle")
         (put! state "recall" nil)))
      state))
  :init (table :text "" :status "idle" :steps (list)))

(define (split-steps text)
  (let ((steps (list)))
    (string.gsub text "[^;\n]+"
                 (lambda (part)
                   (let ((step (string.match part "^%s*(.-)%s*$")))
                     (unless (= step "") (table.insert steps step)))))
    steps))

(define/method "fusion" "get"
  (lambda (ctx state input) state)
  :output (table :text "string" :status "string" :steps "list" :recall "string?"))

(define/method "fusion" "plan"
  (lambda (ctx state input)
    (let ((text (string.match (get input "text") "^%s*(.-)%s*$"))
          (steps (split-steps (get input "text"))))
      (if (null? steps)
          (propose (table :type "cleared"))
          (propose (table :type "planned" :text text :steps steps)))
      (table :steps (length steps))))
  :kind "command"
  :input (table :text "string")
  :output (table :steps "integer"))

(define/method "fusion" "advance"
  (lambda (ctx state input)
    (unless (and (= (get state "status") "active") (not (null? (get state "steps"))))
      (error (string-append "advance: the plan is " (get state "status"))))
    (propose (table :type "advanced" :recall (get input "recall")))
    (table :steps (- (length (get state "steps")) 1)))
  :kind "command"
  :input (table :recall "string?")
  :output (table :steps "integer"))

(define/method "fusion" "block"
  (lambda (ctx state input)
    (when (= (get state "status") "active")
      (propose (table :type "blocked" :reason (get input "reason"))))
    (table :status (if (= (get state "status") "active") "blocked" (get state "status"))))
  :kind "command"
  :input (table :reason "string?")
  :output (table :status "string"))

(hook/round "end"
  (lambda (boundary)
    (let ((plan (call/method "fusion" "get" (table))))
      (when (and (= (get plan "status") "active") (not (null? (get plan "steps"))))
        (let* ((hit (call/method "offload" "search" (table :query (get (get plan "steps") 1))))
               (fact (if hit (get hit "body") nil)))
          (call/method "fusion" "advance" (table :recall fact))
          (notify (if fact
                      (string-append (get plan "text") "\n\nRecalled: " fact)
                      (get plan "text"))
                  "activating")))))
  :post-fail
  (lambda (boundary failure)
    (call/method "fusion" "block" (table :reason (or (get failure "error") (get failure "reason"))))))
