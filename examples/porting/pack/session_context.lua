-- session context: load the project's rules into the agent at session
-- start (and again after a clear or a compaction).
hook.session("start", function(b)
  if b.source == "resume" then return end
  local ok, rules = pcall(admit.read, "file/read", "CONTRIBUTING.md")
  if ok then notify("Project rules (CONTRIBUTING.md):\n" .. rules) end
  notify("attune loaded the project rules (" .. b.source .. ")", "user")
end)
