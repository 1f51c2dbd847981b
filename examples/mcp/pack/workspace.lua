-- workspace: guards the write tools of the reference filesystem server behind
-- `attune mcp` (upstream named fs).
--
--   * a write whose path is not inside config("inside") is refused, so the
--     server never sees it;
--   * every write that succeeds is counted in the project owner `writes`
--     (shared by every connection and session of the project);
--   * an edit ends with a reminder to run the tests;
--   * the tool `writes` (a define/tool) tells the model the count.

local write_tools = {"mcp/fs/write_file", "mcp/fs/edit_file", "mcp/fs/create_directory", "mcp/fs/move_file"}

define.reducer("writes", function(state, action)
  if action.type == "add" then
    state.n = state.n + 1
    state.last = action.path
  end
  return state
end, {scope = "project", init = {n = 0}})

define.method("writes", "add", function(ctx, state, input)
  propose({type = "add", path = input.path})
  return state.n + 1
end, {kind = "command", input = {path = "string"}})

define.method("writes", "count", function(ctx, state)
  return {writes = state.n, last = state.last}
end, {kind = "query"})

-- inside reports whether path names something below the configured folder.
local function inside(path)
  local root = config("inside")
  if type(root) ~= "string" or root == "" or type(path) ~= "string" then return false end
  root = root:gsub("/+$", "")
  if path:find("/%.%./") or path:sub(-3) == "/.." or path:find("^%.%./") then return false end
  return path == root or path:sub(1, #root + 1) == root .. "/"
end

for _, tool in ipairs(write_tools) do
  -- (the handlers name the call record c: `call` is the table of call.method)
  guard.tool(tool, function(c, invoke)
    local args = c.args
    for _, key in ipairs({"path", "source", "destination"}) do
      if args[key] ~= nil and not inside(args[key]) then
        return refuse(key .. " " .. tostring(args[key]) .. " is outside " .. tostring(config("inside")) .. "; write inside it")
      end
    end
    return invoke()
  end)

  hook.tool(tool, {post = function(c, outcome)
    if outcome.status ~= "ok" then return nil end
    local n = call.method("writes", "add", {path = c.args.path or c.args.destination or ""})
    if tool == "mcp/fs/write_file" or tool == "mcp/fs/edit_file" then
      return "attune: " .. (c.args.path or "a file") .. " changed (write " .. n ..
        " in this project); run the tests before you go on"
    end
    return nil
  end})
end

define.tool("attune/writes", function(ctx, args)
  return call.method("writes", "count", {})
end, {effect = {"read"}})
