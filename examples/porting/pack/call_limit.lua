-- call limits: at most max_calls tool calls per session, counted in a
-- session owner (every hook event may run in a process of its own).
define.reducer("calls", function(state, action)
  state.n = state.n + 1
  return state
end, {scope = {"session"}, init = {n = 0}})

define.method("calls", "take", function(ctx, state, input)
  if state.n >= input.max then return refuse("limit") end
  propose({type = "take"})
  return state.n + 1
end, {kind = "command", input = {max = "number"}})

guard.tool("claude/**", function(c, invoke) -- c, not call: call.method is used here
  local max = config("max_calls") or 50
  local ok, n = pcall(call.method, "calls", "take", {max = max})
  if not ok then
    if not tostring(n):find("limit", 1, true) then error(n) end -- a guard that cannot judge denies
    return refuse("this session has used its " .. max .. " tool calls")
  end
  return invoke()
end)
