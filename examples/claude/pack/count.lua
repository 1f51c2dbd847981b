-- count: a per-project counter of tool calls, kept in a project owner so
-- that every session and every parallel hook process adds to one count.
define.reducer("tool_calls", function(state, action)
  if action.type == "count" then
    state.total = state.total + 1
    state.by_tool[action.tool] = (state.by_tool[action.tool] or 0) + 1
  end
  return state
end, {scope = {"project"}, init = {total = 0, by_tool = {}}})

define.method("tool_calls", "count", function(ctx, state, input)
  propose({type = "count", tool = input.tool})
  return state.total + 1
end, {kind = "command", input = {tool = "string"}})

define.method("tool_calls", "get", function(ctx, state) return state end, {kind = "query"})

-- Two sessions may count at the same moment: the one that loses the race
-- is told stale-revision and counts again on the new state.
local function count(tool)
  for _ = 1, 50 do
    local ok, n = pcall(call.method, "tool_calls", "count", {tool = tool})
    if ok then return n end
    if not string.find(tostring(n), "stale-revision", 1, true) then error(n) end
  end
  error("tool_calls: too busy")
end

hook.tool("**", {post = function(c, out) count(c.path) end})

hook.turn("start", function(b)
  local st = call.method("tool_calls", "get", {})
  notify("This project has seen " .. st.total .. " tool calls so far.")
end)
