package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/attune-dev/attune/behaviors"
	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/internal/tomlx"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

// checkCmd checks a configuration and its programs (R8.2, R9.2): the
// structure of the file, that every selected program is held by a pack,
// and that every bot's programs load (syntax, validate/configuration,
// require, grants). It prints every problem and the shadowing warnings
// and exits 1 when there is any problem.
func checkCmd(args []string, stdout, stderr io.Writer) int {
	args, checkStore := storeFlag(args)
	if len(args) > 1 || (len(args) == 1 && (args[0] == "-h" || args[0] == "--help")) {
		fmt.Fprintln(stderr, "usage: attune check [--store] [FILE]   (default "+config.DefaultFile+"; --store also runs SQLite's integrity check on the store)")
		if len(args) == 1 {
			return 0 // asked for help
		}
		return 2
	}
	file := config.DefaultFile
	if len(args) == 1 {
		file = args[0]
	}
	cfg, err := config.LoadAll(file)
	if cfg == nil {
		printProblems(stdout, err)
		return 1
	}
	var problems []error
	if err != nil { // keys and values: reported with the packs' problems below
		for _, e := range config.Errors(err) {
			problems = append(problems, e)
		}
	}
	structural := len(problems)
	packs := pin.Packs{}
	for i, dir := range cfg.Engine.Packs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			problems = append(problems, cfg.Errorf(fmt.Sprintf("engine.packs[%d]", i+1), "pack folder %s does not exist", dir))
			continue
		}
		packs = append(packs, pin.Pack{Name: dir, FS: os.DirFS(dir)})
	}
	packs = append(packs, pin.Pack{Name: "behaviors", ID: pin.EnginePackID, FS: behaviors.FS})
	for _, w := range packs.Shadowed() {
		fmt.Fprintf(stdout, "%s: warning: %s\n", file, w)
	}
	if err := cfg.Validate(func(name string) bool { _, _, ok := packs.Find(name); return ok }); err != nil {
		for _, e := range config.Errors(err) {
			problems = append(problems, e)
		}
	}
	if len(problems) == 0 && structural == 0 {
		loaded, tools := loadBots(cfg)
		problems = append(problems, loaded...)
		if len(loaded) == 0 {
			problems = append(problems, unknownEffects(cfg, tools)...)
		}
		problems = append(problems, undefinedCalls(cfg, packs)...)
		warnShadowedCall(stdout, cfg, packs)
	}
	if checkStore {
		problems = append(problems, checkStoreFile(cfg, stdout)...)
	}
	for _, p := range problems {
		fmt.Fprintln(stdout, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(stdout, "%s: %d problem(s)\n", file, len(problems))
		return 1
	}
	fmt.Fprintf(stdout, "%s: ok (%d bot(s))\n", file, len(cfg.BotOrder))
	return 0
}

// loadBots starts one instance of every bot on a scratch memory store, so
// that what only loading finds (a syntax error, a refused configuration, a
// missing require, a grant that names no method) is reported too.
// It returns the tools each bot's pin defines, too.
func loadBots(cfg *config.Config) ([]error, []engine.ToolInfo) {
	ctx := context.Background()
	eng, err := engine.New(ctx, engine.Options{Config: cfg, Store: store.NewMemory()})
	if err != nil {
		return []error{err}, nil
	}
	defer eng.Close()
	var problems []error
	var tools []engine.ToolInfo
	for _, name := range cfg.BotOrder {
		inst, err := eng.Start(ctx, engine.StartOptions{ID: "check/" + name, Bot: name})
		if err != nil {
			problems = append(problems, cfg.Errorf("bots."+name, "%v", err))
			continue
		}
		if ts, err := inst.Tools(); err == nil {
			tools = append(tools, ts...)
		}
		inst.Stop()
	}
	return problems, tools
}

// harnessEffects are the effects the agents' built-in tools have under
// attune hook (each dialect in hook/ gives its tools these: Bash exec, Edit write, Task
// spawn...) and that ceilings name.
var harnessEffects = []string{"read", "write", "exec", "network", "spawn"}

// unknownEffects finds ceiling entries that name an effect no tool has: not
// one of the agents' built-in effects, nor an effect a define/tool of a
// pin, a [harness.DIALECT.tools] entry or a [harness.mcp.tools] entry
// declares. Such an entry (exce for exec) allows nothing, and the calls
// it was meant to allow are refused by the ceiling.
func unknownEffects(cfg *config.Config, tools []engine.ToolInfo) []error {
	known := map[string]bool{}
	for _, e := range harnessEffects {
		known[e] = true
	}
	for _, t := range tools {
		for _, e := range t.Effects {
			known[e] = true
		}
	}
	for _, h := range cfg.Hooks {
		for _, es := range h.Tools {
			for _, e := range es {
				known[e] = true
			}
		}
	}
	for _, t := range cfg.MCP.Tools {
		for _, e := range t.Effects {
			known[e] = true
		}
	}
	names := make([]string, 0, len(known))
	for e := range known {
		names = append(names, e)
	}
	sort.Strings(names)
	var problems []error
	for _, bot := range cfg.BotOrder {
		b := cfg.Bots[bot]
		for k, e := range b.Ceiling {
			if known[e] {
				continue
			}
			problems = append(problems, cfg.Errorf(fmt.Sprintf("bots.%s.ceiling[%d]", bot, k+1),
				"effect %q is not an effect of any tool (known: %s)%s", e, strings.Join(names, ", "), tomlx.Suggest(e, names)))
		}
	}
	return problems
}

func printProblems(w io.Writer, err error) {
	errs := config.Errors(err)
	if len(errs) == 0 {
		var ce *config.Error
		if errors.As(err, &ce) {
			errs = []*config.Error{ce}
		}
	}
	if len(errs) == 0 {
		fmt.Fprintln(w, err)
		return
	}
	for _, e := range errs {
		fmt.Fprintln(w, e)
	}
	fmt.Fprintf(w, "%d problem(s)\n", len(errs))
}
