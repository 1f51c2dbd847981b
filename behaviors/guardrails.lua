-- guardrails: ready-made policies, each off until the bot's config selects
-- it with a table [bots.NAME.config.guardrails.POLICY] (README.md,
-- docs/guardrails.md). Policies: protected_paths, destructive_commands,
-- git_hygiene, secrets, read_before_edit, test_gate, call_limits,
-- session_context, rules.
--
-- Owner `guardrails` (session): {read = {PATH = true}, calls = {total,
-- turn, by_tool = {PATH = n}, turn_by_tool = {PATH = n}}, gates = {TURN = n}}.
-- Methods: note_read {path}, was_read {path}, take {tool, limits},
-- turn_start {}, gate {turn, max}, scan {text} (the secrets detectors'
-- names for a text), redact {text}.

local cfg = config() or {}
local call_method = call.method

local POLICIES = {protected_paths = true, destructive_commands = true, git_hygiene = true, secrets = true,
  read_before_edit = true, test_gate = true, call_limits = true, session_context = true, rules = true}
for k in pairs(cfg) do
  if not POLICIES[k] and k ~= "project" then
    error("guardrails." .. tostring(k) .. ": no such policy; want one of protected_paths, destructive_commands, git_hygiene, secrets, read_before_edit, test_gate, call_limits, session_context, rules")
  end
end

-- policy returns the options of a selected policy, nil when it is off.
local function policy(name)
  local p = cfg[name]
  if p == nil or p == false then return nil end
  if p == true then return {} end
  if type(p) ~= "table" then error("guardrails." .. name .. ": want a table of options, got " .. type(p)) end
  if p.enabled == false then return nil end
  return p
end

------------------------------------------------------------------------
-- Tool paths per harness: the one place they are named.
------------------------------------------------------------------------
local TOOLS = {
  shell = {"claude/Bash", "codex/Bash", "codex/shell", "codex/local_shell", "codex/exec_command", "gemini/run_shell_command", "copilot/bash", "cursor/Shell"},
  read  = {"claude/Read", "claude/NotebookRead", "gemini/read_file", "gemini/read_many_files", "copilot/view", "cursor/Read"},
  write = {"claude/Edit", "claude/Write", "claude/MultiEdit", "claude/NotebookEdit",
           "gemini/write_file", "gemini/replace", "copilot/edit", "copilot/create", "cursor/Write", "cursor/Edit",
           "codex/Edit", "codex/Write"},
  patch = {"codex/apply_patch"},
  search = {"claude/Grep", "claude/Glob", "cursor/Grep", "gemini/search_file_content", "gemini/glob"},
  -- the tools whose results a result guard may judge (every tool of every harness)
  any   = {"claude/**", "codex/**", "gemini/**", "copilot/**", "cursor/**", "mcp/**"},
}
local PATH_KEYS = {"file_path", "path", "absolute_path", "notebook_path", "filePath", "target_file"}

local function each(list, fn) for _, p in ipairs(list) do fn(p) end end

-- the command text of a shell call, whatever the dialect names it
local function shell_text(args)
  local c = args.command or args.cmd or args.script
  if type(c) == "table" then c = table.concat(c, " ") end
  return type(c) == "string" and c or ""
end

-- the files a file tool or a patch names
local function file_args(args)
  local out = {}
  for _, k in ipairs(PATH_KEYS) do
    if type(args[k]) == "string" then out[#out + 1] = args[k] end
  end
  if type(args.paths) == "table" then
    for _, p in ipairs(args.paths) do if type(p) == "string" then out[#out + 1] = p end end
  end
  for _, v in pairs(args) do
    if type(v) == "string" then
      for f in v:gmatch("%*%*%* [%a]+ File: ([^\n]+)") do out[#out + 1] = f end
      for f in v:gmatch("%*%*%* Move to: ([^\n]+)") do out[#out + 1] = f end
    end
  end
  return out
end

local function cwd_of(call)
  local h = call.harness
  if type(h) == "table" and type(h.event) == "table" and type(h.event.cwd) == "string" then return h.event.cwd end
  return cfg.project
end

-- normalize: lexical clean of a path (no symlink resolution)
local function clean(path)
  local abs = path:sub(1, 1) == "/"
  local parts = {}
  for seg in path:gmatch("[^/]+") do
    if seg == ".." then
      if #parts > 0 and parts[#parts] ~= ".." then parts[#parts] = nil
      elseif not abs then parts[#parts + 1] = ".." end
    elseif seg ~= "." then parts[#parts + 1] = seg end
  end
  local s = table.concat(parts, "/")
  if abs then s = "/" .. s end
  if s == "" then s = "." end
  return s
end

local function lower(s) return string.lower(s) end

------------------------------------------------------------------------
-- Shell parsing: segments of words, with quoting, escapes and
-- substitutions flattened so `\rm`, `"r"m`, `$(rm ...)`, `sh -c "rm ..."`
-- all show the command they run.
------------------------------------------------------------------------
local WRAPPERS = {command = true, builtin = true, exec = true, env = true, sudo = true, doas = true,
  nohup = true, time = true, nice = true, xargs = true, timeout = true, stdbuf = true, ionice = true, ["then"] = true,
  ["do"] = true, ["else"] = true, ["if"] = true, ["while"] = true, ["!"] = true}
local SHELLS = {sh = true, bash = true, zsh = true, dash = true, ksh = true, fish = true, busybox = true}

local function flatten(cmd)
  local s = cmd:gsub("\\\n", " ")
  s = s:gsub("%$'", "'"):gsub('%$"', '"')
  s = s:gsub("\\(.)", "%1")           -- \rm -> rm
  s = s:gsub("['\"]", "")             -- "r"m -> rm, 'rm -rf' -> rm -rf
  s = s:gsub("%$%(", ";"):gsub("`", ";"):gsub("<%(", ";"):gsub(">%(", ";")
  s = s:gsub("&&", ";"):gsub("||", ";"):gsub("[|&\n(){}]", ";")
  return s
end

-- segments returns a list of word lists, wrappers and assignments removed,
-- `sh -c TEXT` split into the text's own segments.
local function segments(cmd)
  local out = {}
  for seg in flatten(cmd):gmatch("[^;]+") do
    local words = {}
    for w in seg:gmatch("%S+") do words[#words + 1] = w end
    local i = 1
    while i <= #words do
      local w = words[i]
      local base = w:match("[^/]+$") or w
      if WRAPPERS[base] or w:match("^[%a_][%w_]*=") then
        i = i + 1
        -- options of the wrapper (sudo -u root, timeout 5, env -i)
        while i <= #words and (words[i]:sub(1, 1) == "-" or (base == "timeout" and words[i]:match("^%d"))) do
          local opt = words[i]
          i = i + 1
          if (base == "sudo" or base == "doas") and (opt == "-u" or opt == "-g" or opt == "-C" or opt == "-D") then i = i + 1 end
          if base == "env" and (opt == "-u" or opt == "-C") then i = i + 1 end
          if base == "nice" and opt == "-n" then i = i + 1 end
        end
      elseif SHELLS[base] then
        -- the shell's -c text is in the following words already flattened
        local j = i + 1
        while j <= #words and words[j]:sub(1, 1) == "-" do j = j + 1 end
        i = j
      else
        break
      end
    end
    if words[i] == "alias" and words[i + 1] then
      -- alias NAME=VALUE: VALUE is what NAME will run
      i = i + 1
      words[i] = words[i]:gsub("^[^=]*=", "")
      if words[i] == "" then i = i + 1 end
    end
    local rest = {}
    for k = i, #words do rest[#rest + 1] = words[k] end
    if #rest > 0 then
      rest[1] = rest[1]:match("[^/]+$") or rest[1]   -- /bin/rm -> rm
      out[#out + 1] = rest
    end
  end
  return out
end

-- a command whose text is produced at run time cannot be judged
local function opaque(cmd)
  local l = " " .. lower(cmd) .. " "
  if l:find("base64%s+%-%-?d") or l:find("base64%s+%-%-decode") or l:find("xxd%s+%-r") or l:find("openssl%s+enc") then
    return "it decodes text to run"
  end
  if l:find("[^%w_]eval[^%w_]") then return "it runs eval" end
  if l:find("|%s*[%w/]*sh[^%w]") or l:find("|%s*[%w/]*python%d?[^%w]") or l:find("|%s*[%w/]*perl[^%w]") then
    return "it pipes text into an interpreter"
  end
  if cmd:find("%$'[^']*\\[xX0-7uU]") then return "it builds text from escapes" end
  if l:find("printf[^;|]*\\x%x%x") or l:find("printf[^;|]*\\%d%d%d") then return "it builds text from escapes" end
  return nil
end

local function has_flag(words, short, long)
  for k = 2, #words do
    local w = words[k]
    if long and w == long then return true end
    if short and w:match("^%-[%a]+$") and w:find(short, 2, true) then return true end
  end
  return false
end

-- the words of a segment that name files (redirect targets split off)
local function path_words(words)
  local out = {}
  for _, w in ipairs(words) do
    local t = w:gsub("^%d*[<>]+&?", "")
    for piece in t:gmatch("[^=,:<>]+") do out[#out + 1] = piece end
    out[#out + 1] = t
  end
  return out
end

------------------------------------------------------------------------
-- Globs
------------------------------------------------------------------------
local function glob_pattern(g)
  local p = g:gsub("[%^%$%(%)%%%.%[%]%+%-]", "%%%0")
  p = p:gsub("%*%*", "\1"):gsub("%*", "[^/]*"):gsub("%?", "[^/]"):gsub("\1", ".*")
  return "^" .. p .. "$"
end

-- matches reports whether path falls under glob g: a glob without "/" names
-- any component of the path (".env*", "*.pem"); one ending in "/" a folder
-- anywhere (".git/"); one with "/" inside the whole path or its tail.
local function matches(g, path)
  path = lower(clean(path))
  g = lower(g)
  if g:sub(-1) == "/" then
    local pat = glob_pattern(g:sub(1, -2))
    for seg in path:gmatch("[^/]+") do if seg:match(pat) then return true end end
    return false
  end
  local pat = glob_pattern(g)
  if not g:find("/", 1, true) then
    for seg in path:gmatch("[^/]+") do if seg:match(pat) then return true end end
    return false
  end
  if path:match(pat) then return true end
  local tail = path
  while true do
    local i = tail:find("/", 1, true)
    if not i then return false end
    tail = tail:sub(i + 1)
    if tail:match(pat) then return true end
  end
end

-- a shell glob word (".e*") that could expand to a protected name
local function glob_word_hits(word, globs)
  if not word:find("[%*%?%[]") or not word:find("[%w%.]") then return nil end
  local base = lower(word:match("[^/]+$") or word):gsub("%[[^%]]*%]", "?")
  local ok, pat = pcall(glob_pattern, base)
  if not ok then return nil end
  for _, g in ipairs(globs) do
    -- names the glob matches: its stars empty, and filled
    for _, fill in ipairs({"", "x"}) do
      local sample = g:gsub("/$", ""):gsub("%*%*", ""):gsub("%*", fill):gsub("%?", "x")
      sample = lower(sample:match("[^/]+$") or sample)
      if sample:match(pat) then return g end
    end
  end
  return nil
end

------------------------------------------------------------------------
-- 1. protected_paths
------------------------------------------------------------------------
local pp = policy("protected_paths")
if pp then
  local globs = pp.paths or {".env*", "*.pem", "*.key", "id_rsa*", "id_ed25519*", "id_ecdsa*", ".git/"}
  local allow = pp.allow or {".env.example", ".env.sample", ".env.template"}
  -- protected returns the glob path falls under, itself or (with
  -- realpath = true and resolve) once its symbolic links are resolved by
  -- the host read file/realpath
  local function protected(path, resolve)
    if type(path) ~= "string" or path == "" then return nil end
    for _, a in ipairs(allow) do if matches(a, path) then return nil end end
    for _, g in ipairs(globs) do if matches(g, path) then return g end end
    if pp.realpath and resolve then
      local ok, real = pcall(admit.read, "file/realpath", path)
      if not ok then return "file/realpath cannot be read: enable \"file/realpath\" = true in [harness.reads]" end
      if type(real) == "string" and real ~= path then
        for _, a in ipairs(allow) do if matches(a, real) then return nil end end
        for _, g in ipairs(globs) do if matches(g, real) then return g .. ", through a link" end end
      end
    end
    return nil
  end
  local function why(path, g) return "guardrails: " .. path .. " is protected (" .. g .. "); ask the user instead" end
  local function file_guard(call, invoke)
    for _, f in ipairs(file_args(call.args)) do
      local g = protected(f, true)
      if g then return refuse(why(f, g)) end
    end
    return invoke()
  end
  each(TOOLS.read, function(p) guard.tool(p, file_guard) end)
  each(TOOLS.write, function(p) guard.tool(p, file_guard) end)
  each(TOOLS.patch, function(p) guard.tool(p, file_guard) end)
  each(TOOLS.search, function(p) guard.tool(p, file_guard) end)
  guard.tool("mcp/**", file_guard)
  each(TOOLS.shell, function(p)
    guard.tool(p, function(call, invoke)
      local cmd = shell_text(call.args)
      local o = opaque(cmd)
      if o then return refuse("guardrails: the command cannot be checked for protected paths: " .. o) end
      -- every word of the command, assignments and wrappers included
      local words = {}
      for w in flatten(cmd):gsub(";", " "):gmatch("%S+") do words[#words + 1] = w end
      local resolved = 0
      for k, w in ipairs(path_words(words)) do
        -- resolve the words that can name a file (not the command's name,
        -- not options), at most max_resolve of them
        local resolve = k > 1 and w:match("^[%w%._/~+@%-]+$") ~= nil and w:sub(1, 1) ~= "-" and resolved < (pp.max_resolve or 32)
        if resolve then resolved = resolved + 1 end
        local g = protected(w, resolve) or glob_word_hits(w, globs)
        if g then return refuse(why(w, g)) end
      end
      return invoke()
    end)
  end)
end

------------------------------------------------------------------------
-- 2. destructive_commands
------------------------------------------------------------------------
local dc = policy("destructive_commands")
if dc then
  local actions = {rm_outside = "deny", force_push = "deny", reset_hard = "ask", clean = "ask",
    chmod_777 = "deny", disk_wipe = "deny", package_wipe = "ask", opaque = "deny"}
  for k, v in pairs(dc.actions or {}) do
    if v ~= "deny" and v ~= "ask" and v ~= "off" then error("guardrails.destructive_commands.actions." .. k .. ": want deny, ask or off, got " .. tostring(v)) end
    actions[k] = v
  end
  local protected_branches = dc.protected_branches or {"main", "master"}
  local function is_protected_branch(b)
    for _, p in ipairs(protected_branches) do if b == p or b:match(glob_pattern(p)) then return true end end
    return false
  end
  local allow_outside = dc.allow_outside or {"/tmp/**"}
  local function outside(target, cwd)
    for _, g in ipairs(allow_outside) do
      if target:sub(1, 1) == "/" and not target:find("[%$~%*]") and clean(target):match(glob_pattern(g)) then return false end
    end
    if target:find("[%$~%*]") and not target:match("^[%w%._%-/]+%*$") then return true end
    if target:sub(1, 1) ~= "/" then
      local c = clean(target)
      return c == ".." or c:sub(1, 3) == "../" or c == "."
    end
    if not cwd then return true end
    local t, root = clean(target), clean(cwd)
    return not (t:sub(1, #root + 1) == root .. "/")
  end
  -- judge returns rule, message for the first rule a segment breaks
  local function judge(words, cwd)
    local c = words[1]
    if c == "rm" and (has_flag(words, "r", "--recursive") or has_flag(words, "R")) then
      for k = 2, #words do
        local w = words[k]
        if w:sub(1, 1) ~= "-" and outside(w, cwd) then return "rm_outside", "rm -r of " .. w .. ", outside the project" end
      end
    end
    if c == "git" then
      local sub = words[2]
      local k = 2
      while words[k] and (words[k] == "-C" or words[k] == "-c") do k = k + 2 end
      sub = words[k]
      if sub == "push" then
        local force, targets = false, {}
        for j = k + 1, #words do
          local w = words[j]
          if w == "--force" or w == "-f" or w:match("^%-%-force%-with%-lease") or (w:match("^%-%a+$") and w:find("f", 2, true)) then force = true
          elseif w:sub(1, 1) == "+" then force = true; targets[#targets + 1] = w:sub(2)
          elseif w:sub(1, 1) ~= "-" then targets[#targets + 1] = w end
        end
        if force then
          local named = {}
          for j = 2, #targets do named[#named + 1] = (targets[j]:match(":(.+)$") or targets[j]) end
          if #named == 0 then
            local ok, b = pcall(admit.read, "git/branch")
            if not ok or type(b) ~= "string" then return "force_push", "a force push (the branch cannot be read)" end
            named = {b}
          end
          for _, b in ipairs(named) do
            if is_protected_branch(b) then return "force_push", "a force push to " .. b end
          end
        end
      elseif sub == "reset" and has_flag(words, nil, "--hard") then return "reset_hard", "git reset --hard drops uncommitted work"
      elseif sub == "clean" and (has_flag(words, "f", "--force")) and (has_flag(words, "d") or has_flag(words, "x") or has_flag(words, "X")) then
        return "clean", "git clean deletes untracked files"
      end
    end
    if c == "chmod" and (has_flag(words, "R", "--recursive")) then
      for k = 2, #words do if words[k]:match("^0?777$") or words[k]:match("a%+rwx") then return "chmod_777", "chmod -R 777" end end
    end
    if c == "dd" then
      for k = 2, #words do if words[k]:match("^of=/dev/") then return "disk_wipe", "dd onto a device" end end
    end
    if c:match("^mkfs") or c == "wipefs" or c == "fdisk" or c == "sfdisk" or c == "parted" then return "disk_wipe", c .. " rewrites a disk" end
    if c == "shred" then for k = 2, #words do if words[k]:match("^/dev/") then return "disk_wipe", "shred of a device" end end end
    for _, w in ipairs(words) do if w:match("^>+/dev/[sh]d") or w:match("^>+/dev/nvme") then return "disk_wipe", "a write onto a device" end end
    local sub = words[2] or ""
    if (c == "apt" or c == "apt-get" or c == "dnf" or c == "yum") and (sub == "purge" or sub == "remove" or sub == "autoremove") then return "package_wipe", c .. " " .. sub end
    if c == "brew" and (sub == "uninstall" or sub == "remove" or sub == "rm") then return "package_wipe", "brew " .. sub end
    if (c == "pip" or c == "pip3") and sub == "uninstall" then return "package_wipe", c .. " uninstall" end
    if c == "npm" and (sub == "uninstall" or sub == "rm" or sub == "remove") and has_flag(words, "g", "--global") then return "package_wipe", "npm uninstall -g" end
    if c == "conda" and (sub == "remove" or sub == "uninstall") and has_flag(words, nil, "--all") then return "package_wipe", "conda remove --all" end
    if c == "pacman" and sub:match("^%-R") then return "package_wipe", "pacman " .. sub end
    return nil
  end
  each(TOOLS.shell, function(p)
    guard.tool(p, function(call, invoke)
      local cmd = shell_text(call.args)
      local o = opaque(cmd)
      if o and actions.opaque ~= "off" then
        local msg = "guardrails: the command cannot be checked: " .. o
        if actions.opaque == "ask" then return ask(msg) end
        return refuse(msg)
      end
      local cwd = cwd_of(call)
      local verdict = nil
      for _, words in ipairs(segments(cmd)) do
        local rule, msg = judge(words, cwd)
        if rule and actions[rule] ~= "off" then
          local m = "guardrails (" .. rule .. "): " .. msg
          if actions[rule] ~= "ask" then return refuse(m) end
          verdict = verdict or m
        end
      end
      if verdict then return ask(verdict) end
      return invoke()
    end)
  end)
end

------------------------------------------------------------------------
-- 3. git_hygiene
------------------------------------------------------------------------
local gh = policy("git_hygiene")
if gh then
  local branches = gh.protected_branches or {"main", "master"}
  local function message_of(cmd)
    return cmd:match("%-m%s*\"([^\"]*)\"") or cmd:match("%-m%s*'([^']*)'") or cmd:match("%-%-message[= ]\"([^\"]*)\"")
      or cmd:match("%-%-message[= ]'([^']*)'") or cmd:match("%-m%s+([^%s;&|]+)") or cmd:match("%-%-message=([^%s;&|]+)")
  end
  each(TOOLS.shell, function(p)
    guard.tool(p, function(call, invoke)
      local cmd = shell_text(call.args)
      local flat = lower(flatten(cmd))
      -- compare in lower case on both sides: git's config keys are case-insensitive
      if gh.hooks_path ~= false and (flat:find("core%.hookspath") or flat:find("git_config_key_%d+=core%.hookspath")) then
        return refuse("guardrails (git_hygiene): the hooks folder (core.hooksPath) may not be changed")
      end
      for _, words in ipairs(segments(cmd)) do
        if words[1] == "git" then
          local k = 2
          while words[k] and (words[k] == "-C" or words[k] == "-c") do k = k + 2 end
          local sub = words[k]
          if gh.no_verify ~= false then
            for j = k + 1, #words do
              if words[j] == "--no-verify" or (sub == "commit" and words[j]:match("^%-%a*n%a*$") and not words[j]:match("^%-%-")) then
                return refuse("guardrails (git_hygiene): --no-verify skips the project's hooks; fix what they report instead")
              end
            end
          end
          if sub == "commit" then
            if gh.protect_branches ~= false then
              local ok, b = pcall(admit.read, "git/branch")
              if not ok or type(b) ~= "string" then
                return refuse("guardrails (git_hygiene): the branch cannot be read (enable \"git/branch\" in [harness.reads])")
              end
              b = b:gsub("%s+$", "")
              for _, pb in ipairs(branches) do
                if b == pb or b:match(glob_pattern(pb)) then
                  return refuse("guardrails (git_hygiene): no commits on " .. b .. "; create a branch first")
                end
              end
            end
            if gh.message_pattern then
              local m = message_of(cmd)
              if m and not m:find(gh.message_pattern) then
                return refuse("guardrails (git_hygiene): the commit message does not follow the rule: " .. (gh.message_hint or gh.message_pattern))
              end
            end
          end
        end
      end
      return invoke()
    end)
  end)
end

------------------------------------------------------------------------
-- The session owner: reads, call counts, test gates.
------------------------------------------------------------------------
define.reducer("guardrails", function(state, a)
  if a.type == "read" then state.read[a.path] = true
  elseif a.type == "call" then
    state.calls.total = state.calls.total + 1
    state.calls.turn = state.calls.turn + 1
    state.calls.by_tool[a.tool] = (state.calls.by_tool[a.tool] or 0) + 1
    state.calls.turn_by_tool[a.tool] = (state.calls.turn_by_tool[a.tool] or 0) + 1
  elseif a.type == "turn" then
    state.calls.turn = 0
    state.calls.turn_by_tool = {}
  elseif a.type == "gate" then
    state.gates[a.turn] = (state.gates[a.turn] or 0) + 1
  end
  return state
end, {scope = {"session"}, init = {read = {}, calls = {total = 0, turn = 0, by_tool = {}, turn_by_tool = {}}, gates = {}}})

define.method("guardrails", "note_read", function(ctx, state, input)
  if not state.read[input.path] then propose({type = "read", path = input.path}) end
  return true
end, {kind = "command", input = {path = "string"}})

define.method("guardrails", "was_read", function(ctx, state, input)
  return state.read[input.path] == true
end, {kind = "query", input = {path = "string"}})

define.method("guardrails", "turn_start", function(ctx, state, input)
  propose({type = "turn"})
  return true
end, {kind = "command"})

define.method("guardrails", "take", function(ctx, state, input)
  local l, t = input.limits, input.tool
  local c = state.calls
  local function over(n, max, what)
    if max and n >= max then return what .. " (" .. max .. ")" end
  end
  local hit = over(c.total, l.session, "the session's tool calls")
    or over(c.turn, l.turn, "this turn's tool calls")
    or over(c.by_tool[t] or 0, l.tool_session, "the session's calls of " .. t)
    or over(c.turn_by_tool[t] or 0, l.tool_turn, "this turn's calls of " .. t)
  if hit then return refuse("limit: " .. hit) end
  propose({type = "call", tool = t})
  return c.total + 1
end, {kind = "command", input = {tool = "string", limits = "map"}})

define.method("guardrails", "gate", function(ctx, state, input)
  local key = tostring(input.turn)
  local n = state.gates[key] or 0
  if n >= input.max then return false end
  propose({type = "gate", turn = key})
  return true
end, {kind = "command", input = {turn = "any", max = "number"}})

------------------------------------------------------------------------
-- 4. secrets
------------------------------------------------------------------------
local function rep(cls, n) return string.rep(cls, n) end

local function luhn(digits)
  local sum, alt = 0, false
  for i = #digits, 1, -1 do
    local d = tonumber(digits:sub(i, i))
    if alt then d = d * 2; if d > 9 then d = d - 9 end end
    sum = sum + d
    alt = not alt
  end
  return sum % 10 == 0
end

-- each detector: name, kind ("key" or "pii"), pattern, and an optional
-- check(match, text, start) that rejects look-alikes.
local function word_edge(text, s, e)
  local before = s > 1 and text:sub(s - 1, s - 1) or ""
  local after = text:sub(e + 1, e + 1)
  return not before:match("[%w_]") and not after:match("[%w_]")
end
local SECRET_WORDS = "[Pp][Aa][Ss][Ss][Ww][Oo][Rr][Dd]"
local DETECTORS = {
  {name = "private_key", kind = "key", pattern = "%-%-%-%-%-BEGIN [%u ]*PRIVATE KEY%-%-%-%-%-.-%-%-%-%-%-END [%u ]*PRIVATE KEY%-%-%-%-%-"},
  {name = "private_key", kind = "key", pattern = "%-%-%-%-%-BEGIN [%u ]*PRIVATE KEY%-%-%-%-%-[%w%+/=%s]*"},
  {name = "aws_access_key", kind = "key", pattern = "A[SK]IA" .. rep("[%u%d]", 16), check = word_edge},
  {name = "github_token", kind = "key", pattern = "gh[pousr]_" .. rep("[%w]", 36) .. "[%w]*", check = word_edge},
  {name = "github_token", kind = "key", pattern = "github_pat_" .. rep("[%w_]", 60) .. "[%w_]*", check = word_edge},
  {name = "slack_token", kind = "key", pattern = "xox[baprse]%-" .. rep("[%w]", 8) .. "[%w%-]*", check = word_edge},
  {name = "stripe_key", kind = "key", pattern = "[sr]k_live_" .. rep("[%w]", 16) .. "[%w]*", check = word_edge},
  {name = "google_api_key", kind = "key", pattern = "AIza" .. rep("[%w_%-]", 35), check = word_edge},
  {name = "jwt", kind = "key", pattern = "eyJ[%w_%-]+%.eyJ[%w_%-]+%.[%w_%-]+", check = function(t, s, e) return e - s > 30 and word_edge(t, s, e) end},
  {name = "password", kind = "key", pattern = SECRET_WORDS .. "[%w_]*%s*[=:]%s*[\"']?[^%s\"',;]+", check = function(t, s, e)
    local v = t:sub(s, e):match("[=:]%s*[\"']?([^%s\"',;]+)$") or ""
    if #v < 6 or v:match("^[%$<{%*%%]") or v:match("^%[redacted") then return false end
    local lv = v:lower()
    return lv ~= "password" and lv ~= "required" and lv ~= "none" and lv ~= "null" and lv ~= "string" and not lv:match("^x+$")
  end},
  {name = "email", kind = "pii", pattern = "[%w%._%%%+%-]+@[%w%-]+%.[%w%.%-]+", check = function(t, s, e)
    local m = t:sub(s, e):gsub("[%.%-]+$", "")
    local user, domain = m:match("^(.-)@(.+)$")
    if not user or user == "git" then return false end
    local tld = domain:match("%.([^%.]+)$") or ""
    if not tld:match("^%a%a+$") then return false end
    local ext = lower(tld)
    if ext == "png" or ext == "jpg" or ext == "jpeg" or ext == "gif" or ext == "svg" or ext == "webp" then return false end
    return true
  end},
  {name = "card_number", kind = "pii", pattern = "%d[%d %-]+%d", check = function(t, s, e)
    local m = t:sub(s, e)
    if m:find("  ") or m:find("%-%-") then return false end
    local digits = m:gsub("[ %-]", "")
    if #digits < 13 or #digits > 19 then return false end
    if not digits:match("^[3456]") then return false end
    -- grouped like a card (4-4-4-4, 4-6-5) or one run of digits
    if m:find("[ %-]") and not (m:match("^%d%d%d%d[ %-]%d%d%d%d[ %-]%d%d%d%d[ %-]%d+$") or m:match("^%d%d%d%d[ %-]%d%d%d%d%d%d[ %-]%d%d%d%d%d$")) then return false end
    local before, after = t:sub(s - 1, s - 1), t:sub(e + 1, e + 1)
    if before:match("[%w%.]") or after:match("[%w]") then return false end
    return luhn(digits)
  end},
}

local sec = policy("secrets")
local sec_opts = sec or {}
local function enabled_detector(d)
  local only = sec_opts.detectors
  if only == nil then return true end
  for _, n in ipairs(only) do if n == d.name then return true end end
  return false
end

-- scan returns the detections in text: {name, kind, s, e}
local function scan(text)
  local out = {}
  for _, d in ipairs(DETECTORS) do
    if enabled_detector(d) then
      local init = 1
      while true do
        local s, e = text:find(d.pattern, init)
        if not s then break end
        local taken = false
        for _, o in ipairs(out) do if s <= o.e and e >= o.s then taken = true end end
        if not taken and (not d.check or d.check(text, s, e)) then
          out[#out + 1] = {name = d.name, kind = d.kind, s = s, e = e}
        end
        init = e + 1
      end
    end
  end
  table.sort(out, function(a, b) return a.s < b.s end)
  return out
end

local function redact_text(text)
  local hits = scan(text)
  if #hits == 0 then return text, 0 end
  local parts, at = {}, 1
  for _, h in ipairs(hits) do
    parts[#parts + 1] = text:sub(at, h.s - 1)
    parts[#parts + 1] = "[redacted:" .. h.name .. "]"
    at = h.e + 1
  end
  parts[#parts + 1] = text:sub(at)
  return table.concat(parts), #hits
end

define.method("guardrails", "scan", function(ctx, state, input)
  local names = list()
  for _, h in ipairs(scan(input.text)) do names[#names + 1] = h.name end
  return names
end, {kind = "query", input = {text = "string"}})

define.method("guardrails", "redact", function(ctx, state, input)
  return (redact_text(input.text))
end, {kind = "query", input = {text = "string"}})

if sec then
  local refuse_kinds = {}
  for _, k in ipairs(sec.refuse_in_args or {"key"}) do refuse_kinds[k] = true end
  -- walk copies a result, redacting every string inside it
  local function walk(v, depth)
    if type(v) == "string" then return redact_text(v) end
    if type(v) ~= "table" or depth > 20 then return v, 0 end
    local out, n = {}, 0
    for k, x in pairs(v) do
      local y, m = walk(x, depth + 1)
      out[k] = y
      n = n + m
    end
    if n == 0 then return v, 0 end
    return out, n
  end
  local function arg_hit(v, depth)
    if type(v) == "string" then
      for _, h in ipairs(scan(v)) do if refuse_kinds[h.kind] or refuse_kinds[h.name] then return h.name end end
    elseif type(v) == "table" and depth < 20 then
      for _, x in pairs(v) do local h = arg_hit(x, depth + 1); if h then return h end end
    end
    return nil
  end
  each(TOOLS.any, function(p)
    guard.tool(p, function(call, invoke)
      if sec.args ~= false then
        local h = arg_hit(call.args or {}, 0)
        if h then return refuse("guardrails (secrets): the call's arguments hold a secret (" .. h .. "); do not send credentials through tools") end
      end
      return invoke()
    end)
    guard.result(p, function(call, outcome)
      if sec.results == false then return outcome end
      local r, n = walk(outcome.result, 0)
      if n == 0 then return outcome end
      return replace(outcome, r)
    end)
  end)
end

------------------------------------------------------------------------
-- 5. read_before_edit
------------------------------------------------------------------------
local rbe = policy("read_before_edit")
if rbe then
  local function key(call, path)
    local cwd = cwd_of(call)
    if path:sub(1, 1) ~= "/" and cwd then path = cwd .. "/" .. path end
    return clean(path)
  end
  local function full_read(args)
    -- a read of part of a file (offset/limit, a line range) does not count
    if rbe.partial_ok then return true end
    return args.offset == nil and args.limit == nil and args.start_line == nil and args.end_line == nil
      and args.view_range == nil
  end
  each(TOOLS.read, function(p)
    hook.tool(p, {post = function(call, outcome)
      if not full_read(call.args) then return nil end
      for _, f in ipairs(file_args(call.args)) do call_method("guardrails", "note_read", {path = key(call, f)}) end
      return nil
    end})
  end)
  local function edit_guard(call, invoke)
    local a = call.args
    -- creating a new file (Write with no earlier file) needs no read: the
    -- dialects cannot tell, so Write/create are only checked when configured
    for _, f in ipairs(file_args(a)) do
      local k = key(call, f)
      if not call_method("guardrails", "was_read", {path = k}) then
        return refuse("guardrails (read_before_edit): read " .. f .. " in full before editing it")
      end
    end
    return invoke()
  end
  local edits = rbe.tools or {"claude/Edit", "claude/MultiEdit", "claude/NotebookEdit", "gemini/replace", "copilot/edit", "cursor/Edit", "codex/apply_patch"}
  each(edits, function(p) guard.tool(p, edit_guard) end)
end

------------------------------------------------------------------------
-- 6. test_gate
------------------------------------------------------------------------
local tg = policy("test_gate")
if tg then
  local read = tg.read or "test"
  local max = tg.continues or 1
  local cap = tg.max_output or 4000
  hook.round("end", function(b)
    if b.host_continue then return end -- the agent goes on by itself: not a stop
    local ok, res = pcall(admit.read, "exec/" .. read)
    if not ok then
      -- no test command to run: say so to the user, never hold the agent forever
      notify("guardrails (test_gate): cannot run the tests: " .. tostring(res), "user")
      return
    end
    if type(res) ~= "table" or res.code == 0 then return end
    if not call_method("guardrails", "gate", {turn = b.turn, max = max}) then
      notify("guardrails (test_gate): the tests still fail (exit " .. tostring(res.code) .. ")", "user")
      return
    end
    local out = tostring(res.stdout or "") .. tostring(res.stderr or "")
    if #out > cap then out = "..." .. out:sub(-cap) end
    notify("guardrails (test_gate): `" .. read .. "` fails (exit " .. tostring(res.code) .. "). Fix it before you stop:\n" .. out, "activating")
  end)
end

------------------------------------------------------------------------
-- 7. call_limits
------------------------------------------------------------------------
local cl = policy("call_limits")
if cl then
  local on_exceed = cl.on_exceed or "refuse"
  if on_exceed ~= "refuse" and on_exceed ~= "halt" then error("guardrails.call_limits.on_exceed: want refuse or halt, got " .. tostring(on_exceed)) end
  local per_tool = cl.tools or {}
  hook.turn("start", function(b) call_method("guardrails", "turn_start", {}) end)
  each(TOOLS.any, function(p)
    guard.tool(p, function(call, invoke)
      local t = per_tool[call.path] or {}
      local limits = {session = cl.per_session, turn = cl.per_turn, tool_session = t.per_session, tool_turn = t.per_turn}
      local ok, n = pcall(call_method, "guardrails", "take", {tool = call.path, limits = limits})
      if not ok then
        if not tostring(n):find("limit", 1, true) then error(n) end
        local msg = "guardrails (call_limits): " .. tostring(n):match("limit: (.*)$") .. " is used up"
        if on_exceed == "halt" then return halt(msg) end
        return refuse(msg)
      end
      return invoke()
    end)
  end)
  if cl.max_cost_usd then
    hook.round("end", function(b)
      local ev = type(b.harness) == "table" and b.harness.event or {}
      local cost = ev.total_cost_usd or ev.cost_usd or (type(ev.cost) == "table" and ev.cost.total_cost_usd)
      if type(cost) == "number" and cost > cl.max_cost_usd then
        halt("guardrails (call_limits): the session cost $" .. cost .. ", over the cap $" .. cl.max_cost_usd)
      end
    end)
  end
  if cl.max_rounds then
    hook.round("end", function(b)
      if b.round >= cl.max_rounds then halt("guardrails (call_limits): " .. cl.max_rounds .. " rounds in this turn") end
    end)
  end
end

------------------------------------------------------------------------
-- 8. session_context
------------------------------------------------------------------------
local sc = policy("session_context")
if sc then
  local sources = sc.on or {"startup", "clear", "compact"}
  hook.session("start", function(b)
    local go = false
    for _, s in ipairs(sources) do if b.source == s then go = true end end
    if not go then return end
    local parts = {}
    for _, f in ipairs(sc.files or {}) do
      local ok, text = pcall(admit.read, "file/read", f)
      if ok and type(text) == "string" then parts[#parts + 1] = "## " .. f .. "\n" .. text
      elseif sc.required then error("guardrails (session_context): cannot read " .. f .. ": " .. tostring(text)) end
    end
    for _, k in ipairs(sc.reads or {}) do
      local ok, v = pcall(admit.read, k)
      if ok and v ~= nil then
        if type(v) == "table" then
          if v.stdout then v = v.stdout else
            local lines = {}
            for _, x in ipairs(v) do lines[#lines + 1] = tostring(x) end
            v = table.concat(lines, "\n")
          end
        end
        parts[#parts + 1] = "## " .. k .. "\n" .. tostring(v)
      end
    end
    if sc.text then parts[#parts + 1] = sc.text end
    if #parts > 0 then notify(table.concat(parts, "\n\n")) end
  end)
end

------------------------------------------------------------------------
-- 9. rules
------------------------------------------------------------------------
local rl = policy("rules")
if rl then
  local shell = {}
  for _, p in ipairs(TOOLS.shell) do shell[p] = true end
  for i, r in ipairs(rl.rules or {}) do
    local where = "guardrails.rules.rules[" .. i .. "]"
    if type(r.matcher) ~= "string" then error(where .. ".matcher: want a tool path pattern (\"claude/Bash\", \"*/Bash\", \"mcp/**\")") end
    local action = r.action or "warn"
    if action ~= "warn" and action ~= "block" and action ~= "ask" then error(where .. ".action: want warn, block or ask, got " .. tostring(action)) end
    local msg = r.message or ("rule " .. (r.name or i))
    local function text_of(call)
      if shell[call.path] then return shell_text(call.args) end
      local bits = {}
      for _, k in ipairs(PATH_KEYS) do if type(call.args[k]) == "string" then bits[#bits + 1] = call.args[k] end end
      for _, k in ipairs({"content", "new_string", "old_string", "command", "query", "url", "pattern"}) do
        if type(call.args[k]) == "string" then bits[#bits + 1] = call.args[k] end
      end
      return table.concat(bits, "\n")
    end
    local function hit(call)
      if r.pattern == nil then return true end
      local t = text_of(call)
      if r.literal then return t:find(r.pattern, 1, true) ~= nil end
      local ok, found = pcall(string.find, t, r.pattern)
      if not ok then error(where .. ".pattern: " .. tostring(found)) end
      return found ~= nil
    end
    -- a matcher is a group of the harness table (shell, read, write,
    -- patch) or a glob over tool paths ("claude/Bash", "*/Bash", "mcp/**")
    local group = TOOLS[r.matcher]
    local pat = glob_pattern(r.matcher)
    local function applies(path)
      if group then
        for _, p in ipairs(group) do if p == path then return true end end
        return false
      end
      return path:match(pat) ~= nil
    end
    guard.tool("**", function(call, invoke)
      if not applies(call.path) or not hit(call) then return invoke() end
      if action == "block" then return refuse(msg) end
      if action == "ask" then return ask(msg) end
      notify(msg)
      return invoke()
    end)
  end
end
