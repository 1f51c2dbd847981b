; /plan TEXT — sets the session's plan (R6.10), or clears it when TEXT
; is blank. Steps are the lines of TEXT, or its parts between ';'. Needs the
; program fusion in the pin.
;
; Notes: one ambient note that says how many steps the plan has.

(require "fusion") ; offered only to bots that select fusion

(define/command
  (lambda (ctx text)
    (let ((plan (call/method "fusion" "plan" (table :text text))))
      (notify (if (= (get plan "steps") 0)
                  "Plan cleared."
                  (string-append "Plan set: " (tostring (get plan "steps")) " steps."))
              "ambient"))))
