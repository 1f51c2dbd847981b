-- the behavior the Node and Python hosts drive through attune serve
guard.tool("fs/*", function(call, invoke)
  mark(call, "checked")
  return invoke()
end)
hook.tool("fs/read", {post = function(call, outcome) return "read " .. call.args.path end})
hook.turn("start", function(b) print("turn " .. b.turn .. " begins") end)
hook.round("end", function(b)
  notify("on branch " .. admit.read("vcs/branch"), "activating")
end)
define.reducer("counter", function(state, action)
  if action.type == "add" then state.n = (state.n or 0) + action.by end
  return state
end, {init = {n = 0}})
define.method("counter", "add", function(ctx, state, input)
  propose({type = "add", by = input.by})
  return state.n + input.by
end, {kind = "command", input = {by = "number"}})
