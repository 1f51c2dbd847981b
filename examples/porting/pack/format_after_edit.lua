-- format after edit: run the formatter after every edit and tell the model.
hook.tool("claude/Edit", {post = function(call, outcome)
  local res = admit.read("exec/fmt")
  return "formatter: " .. res.stdout:gsub("%s+$", "")
end})
