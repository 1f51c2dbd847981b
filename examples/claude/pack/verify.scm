; verify: a Stop gate that asks for verification once per turn.
; When Claude is about to stop, the round end posts an activating note: Claude
; continues once with it; the activated round does not ask again.
(hook/round "end"
  (lambda (b)
    (if (not (get b "activated"))
        (notify "Before you stop: run the project's tests (or explain why you cannot) and report what they showed." "activating"))))
