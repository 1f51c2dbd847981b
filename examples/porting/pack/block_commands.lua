-- block commands: refuse the destructive ones, ask before a force push,
-- approve the read-only ones without a prompt.
guard.tool("claude/Bash", function(call, invoke)
  local cmd = call.args.command or ""
  if cmd:find("rm %-[rf][rf]") then return refuse("no rm -rf here") end
  if cmd:find("git push.*%-%-force") then return ask("force push: are you sure?") end
  if cmd == "git status" or cmd == "git diff" then return allow("read-only git") end
  return invoke()
end)
