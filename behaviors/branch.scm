; branch — announces the version-control branch as ambient context (R3.9).
;
; At turn start it reads (admit/read "vcs/branch"). When the value differs
; from the last one it announced in this session (none counts as different)
; or the boundary's context_fresh is true, it emits one ambient note whose
; text contains the value; otherwise it is quiet. The last announced value
; lives in the session owner `branch` (durable, so a restart or hydration
; does not announce the same branch again).
;
; Owner branch (session): state {last = string|nil}; action {type = "announced", value}.

(define/reducer "branch"
  (lambda (state action)
    (when (= (get action "type") "announced")
      (put! state "last" (get action "value")))
    state)
  :init (table))

(define/method "branch" "last" (lambda (ctx state input) (get state "last")))

(define/method "branch" "announce"
  (lambda (ctx state input)
    (propose (table :type "announced" :value (get input "value")))
    #t)
  :kind "command")

(hook/turn "start"
  (lambda (boundary)
    (let ((value (admit/read "vcs/branch")))
      (when (and (not (= value nil))
                 (or (get boundary "context_fresh")
                     (not (= value (call/method "branch" "last" (table))))))
        (call/method "branch" "announce" (table :value value))
        (notify (string-append "Current branch: " (tostring value)) "ambient")))))
