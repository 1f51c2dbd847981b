-- protect: keep secrets and the work tree safe.
-- Refuses reading or editing .env files, any shell command that touches
-- one, and rm -rf; a `git push --force` is let through only after the user
-- confirms (the mark "ask" is in [harness.claude] ask_marks).

local function is_env(path)
  if type(path) ~= "string" then return false end
  local name = string.match(path, "[^/]+$") or path
  return name == ".env" or string.sub(name, 1, 5) == ".env."
end

guard.tool("claude/*", function(call, invoke)
  local a = call.args
  if is_env(a.file_path) or is_env(a.notebook_path) or is_env(a.path) then
    return refuse("attune protect: " .. (a.file_path or a.notebook_path or a.path) .. " holds secrets; ask the user for the value you need")
  end
  return invoke()
end)

guard.tool("claude/Bash", function(call, invoke)
  local c = call.args.command or ""
  if string.find(c, "rm%s+%-%a*r%a*f") or string.find(c, "rm%s+%-%a*f%a*r") then
    return refuse("attune protect: rm -rf is not allowed here; delete files one by one")
  end
  if string.find(c, "%.env") then
    return refuse("attune protect: the command touches a .env file")
  end
  if string.find(c, "git%s+push%s+.*%-%-force") or string.find(c, "git%s+push%s+%-f") then
    mark(call, "ask")
  end
  return invoke()
end)
