; Runtime errors name this file and the line of the form that threw.
; Each tool's handler fails; the comment "throws NAME" marks the line the
; error must name. (A call in tail position replaces its caller's frame, as
; Scheme requires, so a traceback shows only calls that are not the last form.)

(define (helper x)
  (error (string-append "helper failed on " x)))  ; throws nested

(define/tool "explicit"
  (lambda (ctx args)
    (notify "before")
    (error "boom")))  ; throws explicit

(define/tool "arithmetic"
  (lambda (ctx args)
    (let ((n (get args :n)))
      (+ 1  ; throws arithmetic
         n))))

(define/tool "nested"
  (lambda (ctx args)
    (helper "x")
    "not reached"))

(define/tool "index"
  (lambda (ctx args)
    (get (get args :missing) :field)))  ; throws index

(define/tool "in-argument"
  (lambda (ctx args)
    (notify "a"
            (if (get args :flag)
                "b"
                (error "inside an if in an argument")))))  ; throws in-argument

(define/tool "map"
  (lambda (ctx args)
    (map (lambda (x) x)  ; throws map
         (get args :items))))

(define/tool "call-nil"
  (lambda (ctx args)
    (let* ((f (get args :f))
           (x 1))
      (f x))))  ; throws call-nil

(define/tool "cond"
  (lambda (ctx args)
    (cond ((get args :a) 1)
          ((get args :b) 2)
          (else
           (error "no clause")))))  ; throws cond
