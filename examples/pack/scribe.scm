; scribe — tools over the offload memory, for the demo's writer and scout.
;
; Tools:
;   memory/write {body, citation}  (effect "write") -> {key, revision}
;       calls offload put-memory: only a bot granted offload.put-memory may.
;   memory/recall {query}           (effect "read")  -> the first entry whose
;       body contains query, or #f; calls offload search (grant offload.search).
;
; A bot's ceiling decides which of the two it may call at all, and a guard
; refuses a memory without a source before the write runs.

(define/tool "memory/write"
  (lambda (ctx args)
    (call/method "offload" "put-memory"
      (table :body (get args "body") :citation (get args "citation"))))
  :effect (list "write")
  :input (table :body "string" :citation "string"))

(define/tool "memory/recall"
  (lambda (ctx args)
    (call/method "offload" "search" (table :query (get args "query"))))
  :effect (list "read")
  :input (table :query "string"))

; A memory must say where it comes from: a write whose citation is empty is
; refused before the tool runs, and the model is told why.
(guard/tool "memory/write"
  (lambda (c invoke)
    (if (= (get (get c "args") "citation") "")
        (refuse "scribe: a memory needs a citation (the file or page it comes from)")
        (invoke))))
