package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/attune-dev/attune/behaviors"
	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
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
	cfg, err := config.Load(file)
	if err != nil {
		printProblems(stdout, err)
		return 1
	}
	var problems []error
	packs := pin.Packs{}
	for i, dir := range cfg.Engine.Packs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			problems = append(problems, cfg.Errorf(fmt.Sprintf("engine.packs[%d]", i+1), "pack folder %s does not exist", dir))
			continue
		}
		packs = append(packs, pin.Pack{Name: dir, FS: os.DirFS(dir)})
	}
	packs = append(packs, pin.Pack{Name: "behaviors", FS: behaviors.FS})
	for _, w := range packs.Shadowed() {
		fmt.Fprintf(stdout, "%s: warning: %s\n", file, w)
	}
	if err := cfg.Validate(func(name string) bool { _, _, ok := packs.Find(name); return ok }); err != nil {
		for _, e := range config.Errors(err) {
			problems = append(problems, e)
		}
	}
	if len(problems) == 0 {
		problems = append(problems, loadBots(cfg)...)
		warnShadowedCall(stdout, cfg, packs)
		for _, n := range rewriteNotes(cfg, packs) {
			fmt.Fprintln(stdout, n)
		}
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
func loadBots(cfg *config.Config) []error {
	ctx := context.Background()
	eng, err := engine.New(ctx, engine.Options{Config: cfg, Store: store.NewMemory()})
	if err != nil {
		return []error{err}
	}
	defer eng.Close()
	var problems []error
	for _, name := range cfg.BotOrder {
		inst, err := eng.Start(ctx, engine.StartOptions{ID: "check/" + name, Bot: name})
		if err != nil {
			problems = append(problems, cfg.Errorf("bots."+name, "%v", err))
			continue
		}
		inst.Stop()
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
