-- redact output: API keys never reach the model; a private key withholds
-- the whole result.
guard.result("claude/Bash", function(call, outcome)
  local r = outcome.result
  if type(r) ~= "table" or type(r.stdout) ~= "string" then return outcome end
  if r.stdout:find("BEGIN [%u ]*PRIVATE KEY") then return refuse("the output holds a private key") end
  local clean = r.stdout:gsub("sk%-[%w%-]+", "sk-[redacted]")
  if clean == r.stdout then return outcome end
  return replace(outcome, {stdout = clean, stderr = r.stderr, interrupted = r.interrupted, isImage = r.isImage})
end)
