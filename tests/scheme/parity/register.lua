-- Every register form of the form signatures (docs/forms.md), written in
-- Lua. register.scm is the same program in the Scheme-style forms; both must
-- register the same declarations.
require("offload")
validate.configuration(function(config)
  if config.limit then return true else return false end
end)
define.tool("tasks/list", function(ctx, args) return list() end, {
  effect = {"read"},
  input = {owner = "string?"},
  output = {items = "list"},
})
guard.tool("fs/**", function(call, invoke) return invoke() end, {reentrant_depth = 1})
guard.turn(function(boundary, invoke) return invoke() end)
guard.round(function(boundary, invoke) return refuse("closed") end)
hook.tool("fs/*", {
  pre = function(call) return nil end,
  post = function(call, outcome) return "checked" end,
  post_fail = function(call, failure) return nil end,
  reentrant_depth = 2,
})
hook.turn("start", function(boundary) return notify("hello", "ambient") end)
hook.round("end", function(boundary) return nil end, {
  post_fail = function(boundary, failure) return nil end,
})
define.reducer("tasks", function(state, action) return state end, {
  scope = {"session", "project"},
  revision = 2,
  abi = "1",
  init = {items = list()},
  protected = {"stamp", "limbo"},
  migrate = {["1"] = function(action) return action end},
})
define.method("tasks", "incomplete", function(ctx, state, input) return false end, {
  kind = "query",
  input = {},
  output = {status = "any"},
})
define.method("tasks@project", "accept", function(ctx, state, input)
  return propose({type = "accept"})
end, {kind = "command", grant = "tasks.accept"})
define.command(function(ctx, text) return notify(text) end)
subscribe("tasks", function(ctx, action) return nil end)
local limit = config("limit")
define.tool("tasks/" .. "count", function(ctx, args) return limit end, {effect = list()})
define.reducer("offload", function(state, action) return state end, {scope = {"project", "global"}})
