package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/attune-dev/attune/config"
)

// initHarness is what `attune init --harness NAME` tailors: the tool path
// of the agent's shell tool, which the starter guard watches.
type initHarness struct {
	name  string
	agent string // the agent's name in messages
	shell string // the tool path of its shell tool; its arguments carry `command`
}

// initHarnesses are the agents `attune init --harness` knows (never
// changed). The paths are the hook dialects' (harness/claude.go, codex.go,
// gemini.go). Copilot CLI's tools are copilot/NAME, its shell tool `bash`;
// the [harness.NAME] table is written for the dialects the configuration
// knows (config.HookDialects), so a copilot project gets one once the
// configuration takes [harness.copilot].
var initHarnesses = []initHarness{
	{"claude", "Claude Code", "claude/Bash"},
	{"codex", "Codex", "codex/Bash"},
	{"gemini", "Gemini CLI", "gemini/run_shell_command"},
	{"copilot", "Copilot CLI", "copilot/bash"},
}

// initPack is one choice of `attune init --pack NAME`: what it adds to the
// starter project (whose own pack, packs/project, is always written). A pack
// of the engine's own folder (behaviors/) is selected by listing its
// programs; its options go into the bot's config tables. Adding a pack to
// init is one entry here.
type initPack struct {
	name    string
	summary string
	// behaviors are programs of the engine's own pack the bot selects,
	// after the starter's.
	behaviors []string
	// ceiling are effects the bot's ceiling needs beyond the starter's.
	ceiling []string
	// grants are the methods of other programs the bot's programs call.
	grants []string
	// config is TOML appended to attune.toml after the bot's table: its
	// [bots.main.config.PROGRAM] tables, with comments on every option.
	// The starter scenario gets the same tables under [config.bots...].
	config string
	// steps are [[step]] tables appended to the starter scenario: what
	// the pack must stop or let through, after the starter's steps.
	// In config and steps, {harness} is the harness's name (claude) and
	// {shell} the tool path of its shell tool (claude/Bash).
	steps string
}

// initPacks are the packs `attune init --pack` knows (never changed); the
// first is the default.
var initPacks = []initPack{
	{name: "starter", summary: "only the project's own pack: a guard refusing rm -rf and an owner counting tool calls"},
	{name: "tasks", summary: "adds the engine's task notebook (tasks: pending, open, done tasks; notes on open tasks at round end)",
		behaviors: []string{"tasks"}, steps: `
[[step]]
op = "method"
owner = "tasks"
method = "incomplete"
expect = { result = false }     # no task open or pending yet
`},
	{name: "goal", summary: "adds the engine's /goal TEXT command (goal: works towards a goal for a number of rounds)",
		behaviors: []string{"goal"}, config: `
[bots.main.config.goal]
loops = 3                     # rounds /goal keeps the agent going before it stops
`, steps: `
[[step]]
op = "command"
name = "goal"
text = "the build passes"
expect = { notes = [{ kind = "ambient", text = "Goal: the build passes" }] }
`},
	{name: "guardrails", summary: "adds the engine's guardrails (protected paths, destructive commands, git hygiene, secrets redaction, read before edit)",
		behaviors: []string{"guardrails"}, config: `
# guardrails: each policy is on while its table is here (docs/guardrails.md)
[bots.main.config.guardrails.protected_paths]
# paths = [".env*", "*.pem", "*.key", "id_rsa*", "id_ed25519*", "id_ecdsa*", ".git/"]
# allow = [".env.example", ".env.sample", ".env.template"]
[bots.main.config.guardrails.destructive_commands]
# protected_branches = ["main", "master"]
# actions = { rm_outside = "deny", force_push = "deny", reset_hard = "ask", clean = "ask" }
[bots.main.config.guardrails.git_hygiene]
protect_branches = false      # true refuses commits on main/master: add "git/branch" = true to [harness.reads]
# message_pattern = "^%a+: "  # a Lua pattern every commit -m message must match
[bots.main.config.guardrails.secrets]
# detectors = ["aws_access_key", "github_token", "private_key", "email", "card_number"]  # default: all
[bots.main.config.guardrails.read_before_edit]
# [bots.main.config.guardrails.test_gate]   # needs [harness.reads.exec.test] argv = [...]
# read = "test"
`, steps: `
[[step]]
op = "tool"
path = "{shell}"
args = { command = "cat .env" }
expect = { status = "refused", refused_by = "guard", reason = ".env is protected" }

[[step]]
op = "tool"
path = "{shell}"
args = { command = "git commit --no-verify -m wip" }
expect = { status = "refused", refused_by = "guard", reason = "--no-verify" }
`},
}

// initFile is one file init writes, by its path under the project.
type initFile struct {
	path, text string
}

const initUsage = `usage: attune init [DIR] [--harness claude|codex|gemini|copilot] [--pack NAME]
Writes a starter project into DIR (default: the working directory):
attune.toml, packs/project (a guard and an owner), tests/project.toml (a
scenario that passes: attune test tests), and .gitignore entries for the
store. It never overwrites a file.
`

// initCmd is `attune init [DIR] [--harness H] [--pack NAME]`.
func initCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("attune init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, initUsage)
		fs.PrintDefaults()
	}
	harnessFlag := fs.String("harness", "claude", "the coding agent whose tools the guard watches: "+strings.Join(initHarnessNames(), ", "))
	packFlag := fs.String("pack", initPacks[0].name, "what the bot selects: "+strings.Join(initPackNames(), ", "))
	dirs, code, ok := parseInterleaved(fs, args)
	if !ok {
		return code
	}
	if len(dirs) > 1 {
		fmt.Fprintf(stderr, "attune init: one folder, got %d (%s)\n", len(dirs), strings.Join(dirs, ", "))
		return 2
	}
	dir := "."
	if len(dirs) == 1 {
		dir = dirs[0]
	}
	h, ok := findInit(initHarnesses, func(h initHarness) string { return h.name }, *harnessFlag)
	if !ok {
		fmt.Fprintf(stderr, "attune init: --harness %s: unknown harness; want one of %s\n", *harnessFlag, strings.Join(initHarnessNames(), ", "))
		return 2
	}
	p, ok := findInit(initPacks, func(p initPack) string { return p.name }, *packFlag)
	if !ok {
		fmt.Fprintf(stderr, "attune init: --pack %s: unknown pack; want one of %s\n", *packFlag, strings.Join(initPackNames(), ", "))
		for _, p := range initPacks {
			fmt.Fprintf(stderr, "  %-8s %s\n", p.name, p.summary)
		}
		return 2
	}
	files := initFiles(h, p)
	var exist []string
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(dir, f.path)); err == nil {
			exist = append(exist, filepath.Join(dir, f.path))
		}
	}
	if len(exist) > 0 {
		fmt.Fprintf(stderr, "attune init: %s already exist(s); init never overwrites a file: move it away or init another folder\n", strings.Join(exist, ", "))
		return 2
	}
	for _, f := range files {
		path := filepath.Join(dir, f.path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fmt.Fprintln(stderr, "attune init:", err)
			return 1
		}
		// O_EXCL: a file that appeared since the check is not overwritten either
		w, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, err = io.WriteString(w, f.text)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(stderr, "attune init:", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s\n", path)
	}
	added, err := appendGitignore(filepath.Join(dir, ".gitignore"), initIgnores)
	if err != nil {
		fmt.Fprintln(stderr, "attune init:", err)
		return 1
	}
	if len(added) > 0 {
		fmt.Fprintf(stdout, "added %s to %s\n", strings.Join(added, ", "), filepath.Join(dir, ".gitignore"))
	}
	fmt.Fprintf(stdout, "\nnext:\n  attune check %s\n  attune test %s\n  attune hook install %s --project %s\n",
		filepath.Join(dir, config.DefaultFile), filepath.Join(dir, "tests"), h.name, dir)
	if h.name != "claude" {
		fmt.Fprintf(stdout, "  (or have %s run `attune hook %s --config %s` for each hook event)\n", h.agent, h.name, filepath.Join(dir, config.DefaultFile))
	}
	return 0
}

// initIgnores are the .gitignore lines for the store: the SQLite file and
// its -wal and -shm beside it, under .attune/ beside the configuration.
var initIgnores = []string{".attune/"}

// appendGitignore adds the lines the file lacks at its end, keeping what
// it holds; it returns the lines it added (none on a second run).
func appendGitignore(path string, lines []string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add []string
	for _, l := range lines {
		if !have[l] && !have["/"+l] && !have[strings.TrimSuffix(l, "/")] {
			add = append(add, l)
		}
	}
	if len(add) == 0 {
		return nil, nil
	}
	var b strings.Builder
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		b.WriteString("\n")
	}
	b.WriteString("# attune's store (attune init)\n")
	for _, l := range add {
		b.WriteString(l + "\n")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(b.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return add, err
}

func findInit[T any](list []T, name func(T) string, want string) (T, bool) {
	for _, x := range list {
		if name(x) == want {
			return x, true
		}
	}
	var zero T
	return zero, false
}

func initHarnessNames() []string {
	var names []string
	for _, h := range initHarnesses {
		names = append(names, h.name)
	}
	return names
}

func initPackNames() []string {
	var names []string
	for _, p := range initPacks {
		names = append(names, p.name)
	}
	return names
}

// tomlList spells a list of strings in TOML.
func tomlList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// initFiles are the files of a starter project for harness h and pack p.
func initFiles(h initHarness, p initPack) []initFile {
	rep := strings.NewReplacer("{harness}", h.name, "{shell}", h.shell)
	p.config, p.steps = rep.Replace(p.config), rep.Replace(p.steps)
	behaviorList := append([]string{"careful", "calls"}, p.behaviors...)
	ceiling := []string{"read", "write", "exec", "network", "spawn"}
	for _, c := range p.ceiling {
		if !slices.Contains(ceiling, c) {
			ceiling = append(ceiling, c)
		}
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, `# attune.toml: the behaviors %s's hooks run (attune init --harness %s --pack %s).
# attune check checks it; attune test tests runs the scenarios.
[engine]
packs = ["packs/project"]     # searched in order; the engine's own pack comes last
# store = ".attune/state.db"  # the default: SQLite beside this file (in .gitignore)

[bots.main]
behaviors = %s
# the effects the bot's tools may have: a tool with another effect is refused
ceiling = %s
`, h.agent, h.name, p.name, tomlList(behaviorList), tomlList(ceiling))
	if len(p.grants) > 0 {
		fmt.Fprintf(&cfg, "grants = %s\n", tomlList(p.grants))
	}
	cfg.WriteString(p.config)
	if slices.Contains(config.HookDialects(), h.name) {
		fmt.Fprintf(&cfg, `
[harness.%s]
bot = "main"                  # the bot of every session
fail_open = false             # a script error denies the call
`, h.name)
	}
	careful := strings.NewReplacer("{agent}", h.agent, "{shell}", h.shell).Replace(`-- careful: refuse rm -rf in {agent}'s shell tool ({shell}).
-- A refusal denies the call; the reason reaches the model, which can try
-- another way. A call this guard cannot read is refused too.

-- rm_rf reports whether a command line runs rm with both a recursive flag
-- (-r, -R, --recursive) and a force flag (-f, --force), in any order or
-- spelling: rm -rf, rm -fr, rm -r -f, /bin/rm -Rf, sudo rm --recursive --force.
local function rm_rf(cmd)
  for args in string.gmatch(" " .. cmd, "[%s;&|(/]rm(%s[^;&|)]*)") do
    local r = string.find(args, "%s%-%-recursive") or string.find(args, "%s%-%a*[rR]")
    local f = string.find(args, "%s%-%-force") or string.find(args, "%s%-%a*f")
    if r and f then return true end
  end
  return false
end

guard.tool("{shell}", function(c, invoke)
  local cmd = c.args.command
  if type(cmd) ~= "string" then
    return refuse("careful: the shell call has no command text to check")
  end
  if rm_rf(cmd) then
    return refuse("careful: rm -rf is not allowed in this project; delete files one by one")
  end
  return invoke()                 -- under hooks the agent runs the call: status "pending"
end)
`)
	calls := `-- calls: a count of the tool calls of every session of the project, in a
-- project owner; ` + "`calls.get`" + ` reads it. Lua globals do not survive
-- between hook events: state lives in owners.
define.reducer("calls", function(state, action)
  if action.type == "count" then
    state.total = state.total + 1
    state.by_tool[action.tool] = (state.by_tool[action.tool] or 0) + 1
  end
  return state
end, {scope = {"project"}, init = {total = 0, by_tool = {}}})

define.method("calls", "count", function(ctx, state, input)
  propose({type = "count", tool = input.tool})
  return state.total + 1
end, {kind = "command", input = {tool = "string"}})

define.method("calls", "get", function(ctx, state) return state end, {kind = "query"})

-- Two sessions may count at the same moment: the one that loses the race
-- is told stale-revision and counts again on the new state.
hook.tool("**", {post = function(c, out)
  for _ = 1, 50 do
    local ok, err = pcall(call.method, "calls", "count", {tool = c.path})
    if ok then return end
    if not string.find(tostring(err), "stale-revision", 1, true) then error(err) end
  end
  error("calls: too busy")
end})
`
	scenario := fmt.Sprintf(`# The starter pack at work: attune test tests
name = "careful refuses rm -rf; calls counts what ran"

[config.engine]
packs = ["../packs/project"]  # relative to this file

[config.bots.main]
behaviors = %s
ceiling = %s
%s
[host.tools.%q]
effect = ["exec"]
echo = true                   # the fake core returns the call's arguments

[[step]]
op = "start"

[[step]]
op = "turn-begin"
input = "clean up"

[[step]]
op = "tool"
path = %q
args = { command = "rm -rf build" }
expect = { status = "refused", refused_by = "guard", reason = "careful: rm -rf is not allowed in this project; delete files one by one", core_calls = 0 }

[[step]]
op = "tool"
path = %q
args = { command = "cd /tmp && sudo rm -r --force cache" }
expect = { status = "refused", refused_by = "guard", core_calls = 0 }

[[step]]
op = "tool"
path = %q
args = { command = "rm -f notes.txt; ls -rf" }
expect = { status = "ok" }      # rm without -r, and -rf given to ls, are let through

[[step]]
op = "tool"
path = %q
args = { command = "ls" }
expect = { status = "ok", core_calls = 1 }

[[step]]
op = "method"
owner = "calls"
method = "get"
expect = { result = { total = 2, by_tool = { %q = 2 } } }
%s`, tomlList(behaviorList), tomlList(ceiling), scenarioConfig(p), h.shell, h.shell, h.shell, h.shell, h.shell, h.shell, p.steps)
	return []initFile{
		{config.DefaultFile, cfg.String()},
		{"packs/project/careful.lua", careful},
		{"packs/project/calls.lua", calls},
		{"tests/project.toml", scenario},
	}
}

// scenarioConfig is the pack's bot config inside a scenario's [config].
func scenarioConfig(p initPack) string {
	s := ""
	if len(p.grants) > 0 {
		s += "grants = " + tomlList(p.grants) + "\n"
	}
	return s + strings.ReplaceAll(p.config, "[bots.", "[config.bots.")
}
