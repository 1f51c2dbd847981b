; error: keyword-without-value.scm:3:3: hook/tool: :post-fail has no value; write :post-fail VALUE, or 'post-fail for the name as a string
(hook/tool "fs/*" :pre f
  :post-fail)
