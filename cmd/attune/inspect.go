package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/harness"
	"github.com/attune-dev/attune/inspect"
	"github.com/attune-dev/attune/store"
)

// inspectCmd is `attune inspect [--config FILE] [--listen ADDR] [--json]
// [SESSION]` (docs/inspect.md): a local page of the store's sessions, or
// their data as JSON.
func inspectCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("attune inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFlag := fs.String("config", "", "the configuration whose store holds the sessions (default: found as attune hook finds it)")
	listen := fs.String("listen", "127.0.0.1:0", "the loopback address to serve the page on (port 0: any free port)")
	asJSON := fs.Bool("json", false, "print the session's timeline (or, without SESSION, the sessions) as JSON and exit")
	offset := fs.Int("offset", 0, "with --json SESSION: the first event to print (from 0)")
	limit := fs.Int("limit", 0, "with --json SESSION: how many events to print (0: all from --offset; with --page: 500)")
	page := fs.Int("page", 0, "with --json SESSION: print page N (from 1) of --limit events")
	replay := fs.Bool("replay", false, "with --json SESSION: also replay the session against its pin on a scratch copy of the store and report the first divergence")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: attune inspect [--config FILE] [--listen 127.0.0.1:PORT] [SESSION]\n       attune inspect --json [--config FILE] [--offset N | --page N] [--limit N] [SESSION]\n\nShows the store's sessions and, for one session, its timeline: on a local page, or as JSON.")
		fs.PrintDefaults()
	}
	ids, code, ok := parseInterleaved(fs, args)
	if !ok {
		return code
	}
	if len(ids) > 1 {
		fmt.Fprintf(stderr, "attune inspect: one SESSION, got %d: %s\n", len(ids), quoted(ids))
		return 2
	}
	switch {
	case *offset < 0 || *limit < 0 || *page < 0:
		fmt.Fprintln(stderr, "attune inspect: --offset, --limit and --page take a number of at least 0")
		return 2
	case *page > 0 && *offset > 0:
		fmt.Fprintln(stderr, "attune inspect: --page N is the events from (N-1)*limit on; give --page or --offset, not both")
		return 2
	case (*page > 0 || *offset > 0 || *limit > 0) && (!*asJSON || len(ids) == 0):
		fmt.Fprintln(stderr, "attune inspect: --offset, --limit and --page cut the timeline of --json SESSION")
		return 2
	}
	if !*asJSON {
		if err := inspect.CheckListen(*listen); err != nil {
			fmt.Fprintln(stderr, "attune inspect:", err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, cfg, where, err := openStoreOf(ctx, *cfgFlag)
	if err != nil {
		fmt.Fprintln(stderr, "attune inspect:", err)
		return 2
	}
	defer st.Close()
	if *asJSON {
		var v any
		if len(ids) == 0 {
			list, err := inspect.Sessions(ctx, st)
			if err != nil {
				fmt.Fprintln(stderr, "attune inspect:", err)
				return 1
			}
			v = map[string]any{"sessions": list}
		} else {
			t, err := inspect.Load(ctx, st, ids[0])
			if err != nil {
				fmt.Fprintln(stderr, "attune inspect:", err)
				return 2
			}
			if *replay {
				if t.Replay, err = inspect.ReplayOn(ctx, cfg, st, t, nil); err != nil {
					fmt.Fprintln(stderr, "attune inspect: replay:", err)
					return 1
				}
			}
			if *page > 0 {
				n := *limit
				if n == 0 {
					n = inspect.DefaultLimit
				}
				t = t.Slice((*page-1)*n, n)
			} else if *limit > 0 || *offset > 0 {
				t = t.Slice(*offset, *limit)
			}
			// one line, built on every core: a long session is read by
			// scripts (jq), not by eye
			bw := bufio.NewWriterSize(stdout, 1<<16)
			err = t.WriteJSON(bw)
			if err == nil {
				bw.WriteByte('\n')
				err = bw.Flush()
			}
			if err != nil {
				fmt.Fprintln(stderr, "attune inspect:", err)
				return 1
			}
			return 0
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			fmt.Fprintln(stderr, "attune inspect:", err)
			return 1
		}
		return 0
	}
	srv := inspect.NewServer(st, inspect.NewToken(), cfg)
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(stderr, "attune inspect:", err)
		return 1
	}
	url := "http://" + ln.Addr().String() + srv.Path()
	if len(ids) == 1 {
		url += "?session=" + neturl.QueryEscape(ids[0])
	}
	fmt.Fprintf(stderr, "attune inspect: the sessions of %s\n", where)
	fmt.Fprintln(stdout, url)
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "attune inspect:", err)
		return 1
	}
	return 0
}

// openStoreOf opens the store of the configuration found as attune hook
// finds it (--config, $ATTUNE_CONFIG, attune.toml in $CLAUDE_PROJECT_DIR
// or the working directory), without building an engine: nothing is
// loaded or written. A SQLite file that does not exist is not created.
func openStoreOf(ctx context.Context, cfgFlag string) (store.Store, *config.Config, string, error) {
	cwd, _ := os.Getwd()
	path, err := harness.FindConfig(cfgFlag, os.Getenv, os.Getenv("CLAUDE_PROJECT_DIR"), cwd)
	if err != nil {
		return nil, nil, "", err
	}
	cfg, err := config.Load(path)
	if err != nil {
		return nil, nil, "", err
	}
	kind, target, err := config.ParseStore(cfg.Engine.Store, cfg.Dir)
	if err != nil {
		return nil, nil, "", err
	}
	switch kind {
	case config.StoreMemory:
		return nil, nil, "", fmt.Errorf(`%s has store = "memory:", which keeps sessions only while the process that ran them lives; inspect the store a session ran on`, path)
	case config.StoreSQLite:
		if _, err := os.Stat(target); err != nil {
			return nil, nil, "", fmt.Errorf("%s: no store at %s yet (no session has run with this configuration): %w", path, target, err)
		}
	}
	st, err := store.Open(ctx, kind, target)
	if err != nil {
		return nil, nil, "", err
	}
	return st, cfg, storeName(cfg), nil
}
