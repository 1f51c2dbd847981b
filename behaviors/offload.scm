; offload — memory that outlives a session, with citations (R6.6-R6.8).
;
; One file, two owners: offload@project (the default address, offload) and
; offload@global, each its own log folded by the same reducer. A session
; rollback never touches them.
;
;   state    {entries = [entry ...], writes = N}
;   entry    {key, body, citation, revision}; entries stay in the order of
;            their key's first write (append order); a rewrite of a key
;            keeps its place and raises its revision
;   actions  put {key, body, citation, revision}
;
; Methods of offload (both scopes). Grants decide who calls which: a writer
; bot is granted offload.put-memory, a scout bot offload.get-memory and
; offload.search (offload@project.search grants one scope only).
;   put-memory  command  {body, citation, key?, revision?}  -> {key, revision}
;               Writes one entry. A missing citation is refused by the input
;               schema; a blank one is refused by the handler. key defaults
;               to "mN", the next free number. revision is the revision of
;               the key the writer read (get-memory), absent or 0 for a new
;               key: when the key is at another revision the write is stale
;               and fails with "stale-revision:", overwriting nothing. The
;               engine's call ids make a request idempotent: the same call id
;               with the same input appends nothing the second time; with
;               another input it fails with "call-id:".
;   get-memory  query    {key}                              -> entry | #f
;   search      query    {query}                            -> entry | #f
;               the first entry, in append order, whose body contains query
;               (plain text, not a pattern) and is at most 800 characters
;               long (UTF-8 characters, not bytes); #f when none is.
;
; No hook, no subscription: a write emits no note.

(define max-body 800)

(define/reducer "offload"
  (lambda (state action)
    (when (= (get action "type") "put")
      (let ((entry (table :key (get action "key") :body (get action "body")
                          :citation (get action "citation") :revision (get action "revision")))
            (at (position (get state "entries") (get action "key"))))
        (if at
            (put! (get state "entries") at entry)
            (table.insert (get state "entries") entry))
        (put! state "writes" (+ (get state "writes") 1))))
    state)
  :scope (list "project" "global")
  :init (table :entries (list) :writes 0))

; position is the index of the entry with key in entries, or #f.
(define (position entries key)
  (let loop ((i 1))
    (cond ((> i (length entries)) #f)
          ((= (get (get entries i) "key") key) i)
          (else (loop (+ i 1))))))

(define (entry-of state key)
  (let ((at (position (get state "entries") key)))
    (if at (get (get state "entries") at) #f)))

(define (fresh-key state)
  (let loop ((n (+ (length (get state "entries")) 1)))
    (let ((key (string-append "m" (tostring n))))
      (if (entry-of state key) (loop (+ n 1)) key))))

; characters counts UTF-8 characters: the bytes that do not continue one.
(define continuation (string-append "[" (string.char 128) "-" (string.char 191) "]"))
(define (characters s) (length (string.gsub s continuation "")))

(define/method "offload" "put-memory"
  (lambda (ctx state input)
    (let* ((key (or (get input "key") (fresh-key state)))
           (seen (or (get input "revision") 0))
           (entry (entry-of state key))
           (current (if entry (get entry "revision") 0)))
      (cond
        ((= (string.match (get input "citation") "%S") nil)
         (refuse "put-memory: a memory needs a citation"))
        ((not (= seen current))
         (error (string-append "stale-revision: memory " key " is at revision "
                               (tostring current) "; this write read revision " (tostring seen))))
        (else
          (propose (table :type "put" :key key :body (get input "body")
                          :citation (get input "citation") :revision (+ current 1)))
          (table :key key :revision (+ current 1))))))
  :kind "command"
  :input (table :body "string" :citation "string" :key "string?" :revision "integer?")
  :output (table :key "string" :revision "integer"))

(define/method "offload" "get-memory"
  (lambda (ctx state input) (entry-of state (get input "key")))
  :input (table :key "string"))

(define/method "offload" "search"
  (lambda (ctx state input)
    (let ((query (get input "query")))
      (fold (lambda (entry found)
              (cond (found found)
                    ((and (string.find (get entry "body") query 1 #t)
                          (<= (characters (get entry "body")) max-body))
                     entry)
                    (else #f)))
            #f (get state "entries"))))
  :input (table :query "string"))
