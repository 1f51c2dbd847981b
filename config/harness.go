package config

import (
	"slices"
	"strings"

	"github.com/attune-dev/attune/internal/tomlx"
)

// hookDialects are the coding agents whose hooks attune answers (never
// changed).
var hookDialects = []string{"claude", "codex", "copilot", "cursor", "gemini"}

// HookDialects returns the coding agents whose hooks attune answers, the
// keys of [harness.DIALECT] tables that configure `attune hook DIALECT`
// (the caller's own copy).
func HookDialects() []string { return slices.Clone(hookDialects) }

// DefaultHookBot is the bot a hook harness runs when its table names none.
const DefaultHookBot = "main"

// HookHarness is one [harness.DIALECT] table: how a coding agent's hook
// events map onto bots and tool effects.
type HookHarness struct {
	// Bot runs the agent's sessions (default "main").
	Bot string
	// Agents maps a subagent type (Claude Code's agent_type) to the bot
	// its child instances run; a type not listed runs Bot.
	Agents map[string]string
	// Tools maps a tool name (as the agent names it: Bash, Edit,
	// mcp__server__tool) to its effects; a name not listed has the
	// dialect's default effects (none for MCP tools and unknown tools).
	Tools map[string][]string
	// AskMarks: a call still carrying one of these marks at the floor is
	// answered "ask" (the agent asks its user) instead of "allow".
	AskMarks []string
	// FailOpen: a script error lets the call through (with a message)
	// instead of refusing it. Default false: fail closed.
	FailOpen bool
}

var (
	harnessKeys = []string{"bot", "agents", "tools", "ask_marks", "fail_open"}
)

// Hook returns the [harness.DIALECT] table, or the defaults (bot "main",
// fail closed) when the file has none.
func (c *Config) Hook(dialect string) *HookHarness {
	if h := c.Hooks[dialect]; h != nil {
		return h
	}
	return &HookHarness{Bot: DefaultHookBot, Agents: map[string]string{}, Tools: map[string][]string{}, AskMarks: []string{}}
}

// harness reads the [harness] table: one table per dialect.
func (d *decoder) harness(cfg *Config, hp path, v any) {
	t, ok := d.table(hp, v)
	if !ok {
		return
	}
	for _, k := range sortedKeys(t) {
		p := hp.key(k)
		d.line(p)
		if k == "mcp" {
			d.mcp(cfg, p, t[k])
			continue
		}
		if k == "reads" { // reads.go: shared by every dialect and attune mcp
			d.reads(cfg, p, t[k])
			continue
		}
		if k == "warm" { // every dialect's events go to one warm server
			b, ok := t[k].(bool)
			if !ok {
				d.errorf(p, "want true or false, got %s", tomlx.Describe(t[k]))
				continue
			}
			cfg.Warm = b
			continue
		}
		if !slices.Contains(hookDialects, k) {
			d.unknown(p, append(slices.Clone(hookDialects), "mcp", "reads", "warm"))
			continue
		}
		if h := d.hookHarness(cfg, p, t[k]); h != nil {
			if cfg.Hooks == nil {
				cfg.Hooks = map[string]*HookHarness{}
			}
			cfg.Hooks[k] = h
		}
	}
}

func (d *decoder) hookHarness(cfg *Config, hp path, v any) *HookHarness {
	t, ok := d.table(hp, v)
	if !ok {
		return nil
	}
	h := &HookHarness{Bot: DefaultHookBot, Agents: map[string]string{}, Tools: map[string][]string{}, AskMarks: []string{}}
	botAt := hp
	for _, k := range sortedKeys(t) {
		p, v := hp.key(k), t[k]
		d.line(p)
		switch k {
		case "bot":
			if s, ok := d.str(p, v); ok {
				h.Bot, botAt = s, p
			}
		case "agents":
			at, ok := d.table(p, v)
			if !ok {
				break
			}
			for _, typ := range sortedKeys(at) {
				ap := p.key(typ)
				d.line(ap)
				if s, ok := d.str(ap, at[typ]); ok {
					h.Agents[typ] = s
					d.knownBot(cfg, ap, s)
				}
			}
		case "tools":
			tt, ok := d.table(p, v)
			if !ok {
				break
			}
			for _, name := range sortedKeys(tt) {
				tp := p.key(name)
				d.line(tp)
				h.Tools[name] = d.names(tp, tt[name], "effect", notEmpty, nil)
			}
		case "ask_marks":
			h.AskMarks = d.names(p, v, "mark", notEmpty, nil)
		case "fail_open":
			b, ok := v.(bool)
			if !ok {
				d.errorf(p, "want true or false, got %s", tomlx.Describe(v))
				break
			}
			h.FailOpen = b
		default:
			d.unknown(p, harnessKeys)
		}
	}
	d.knownBot(cfg, botAt, h.Bot)
	return h
}

// knownBot reports a bot name the file does not configure.
func (d *decoder) knownBot(cfg *Config, p path, name string) {
	if _, ok := cfg.Bots[name]; ok {
		return
	}
	names := slices.Clone(cfg.BotOrder)
	if len(names) == 0 {
		d.errorf(p, "no bot named %s: add a [bots.%s] table", quote(name), name)
		return
	}
	d.errorf(p, "no bot named %s (the bots are %s)%s", quote(name), strings.Join(names, ", "), tomlx.Suggest(name, names))
}
