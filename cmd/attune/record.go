package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/scenario"
)

// recordCmd turns a stored session into a scenario file that replays it
// against the fake host (docs/testing.md): attune record SESSION
// [--config FILE] [--out FILE.toml]. SESSION is a session id or an
// instance id. Exit 2 when the session cannot be recorded.
func recordCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("attune record", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", config.DefaultFile, "the configuration the session ran with (its store, bots and floor)")
	out := fs.String("out", "", "write the scenario to this file (default: standard output)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: attune record SESSION [--config FILE] [--out FILE.toml]\n\nWrites a scenario that replays a stored session; SESSION is a session id or an instance id.")
		fs.PrintDefaults()
	}
	ids, code, ok := parseInterleaved(fs, args)
	if !ok {
		return code
	}
	if len(ids) > 1 {
		fmt.Fprintf(stderr, "attune record: one SESSION, got %d: %s; record each session to a file of its own\n", len(ids), quoted(ids))
		return 2
	}
	if len(ids) != 1 {
		fs.Usage()
		return 2
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	eng, err := engine.New(ctx, engine.Options{Config: cfg})
	if err != nil {
		fmt.Fprintln(stderr, "attune record:", err)
		return 2
	}
	defer eng.Close()
	rec, err := engine.LoadSession(ctx, eng.Store(), ids[0])
	if err != nil {
		fmt.Fprintln(stderr, "attune record:", err)
		if kind, _, _ := config.ParseStore(cfg.Engine.Store, cfg.Dir); kind == config.StoreMemory {
			fmt.Fprintf(stderr, "attune record: %s has store = \"memory:\", which keeps sessions only while the process that ran them lives; give --config the configuration of the store the session ran on\n", *cfgPath)
		}
		return 2
	}
	data, err := scenario.Record(ctx, rec, scenario.RecordOptions{Config: cfg, Engine: eng, Source: storeName(cfg)})
	if err != nil {
		fmt.Fprintln(stderr, "attune record:", err)
		return 2
	}
	name := *out
	if name == "" {
		name = "recorded.toml"
	}
	sc, err := scenario.Parse(name, data)
	if err != nil { // the recorder wrote something the loader refuses: a bug, said plainly
		fmt.Fprintf(stderr, "attune record: the scenario written for session %s does not load (please report it):\n%v\n", rec.Session, err)
		return 2
	}
	if *out == "" {
		stdout.Write(data)
		return 0
	}
	f, err := createFile(*out)
	if err == nil {
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "attune record:", err)
		return 2
	}
	fmt.Fprintf(stderr, "recorded session %s (%d steps) to %s; run it with: attune test %s\n", rec.Session, len(sc.Steps), *out, shellWord(*out))
	return 0
}

// storeName names the configured store for the recording's header.
func storeName(cfg *config.Config) string {
	kind, target, err := config.ParseStore(cfg.Engine.Store, cfg.Dir)
	if err != nil {
		return cfg.Engine.Store
	}
	if kind == config.StoreSQLite {
		if wd, err := os.Getwd(); err == nil {
			target = strings.TrimPrefix(target, wd+string(os.PathSeparator))
		}
	}
	return fmt.Sprintf("%s store %s", kind, target)
}

// shellWord quotes a path for sh when it needs it, so that a command
// printed for the user can be pasted as it is.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=+,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func quoted(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, " ")
}
