-- protect files: no agent edits or reads secrets or the lock file.
local protected = {"%.env$", "%.env%.", "secrets/", "package%-lock%.json$"}

guard.tool("claude/*", function(call, invoke)
  local path = call.args.file_path or call.args.notebook_path or ""
  for _, pat in ipairs(protected) do
    if path:find(pat) then return refuse(path .. " is protected in this project") end
  end
  return invoke()
end)
