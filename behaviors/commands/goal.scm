; /goal TEXT — sets the session's goal (R6.9), or clears it when TEXT
; is blank. Needs the program goal in the pin. A command file has its own,
; empty configuration: the number of loops comes from the goal program's
; configuration (loops, default 3), which goal's own set method reads.
;
; Notes: one ambient note that says what the goal now is.

(require "goal") ; offered only to bots that select goal

(define/command
  (lambda (ctx text)
    (let ((goal (string.match text "^%s*(.-)%s*$")))
      (if (= goal "")
          (begin
            (call/method "goal" "clear" (table))
            (notify "Goal cleared." "ambient"))
          (let ((set (call/method "goal" "set" (table :text goal))))
            (notify (string-append "Goal: " (get set "text") " ("
                                   (tostring (get set "loops")) " loops)")
                    "ambient"))))))
