package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/server"
)

// serveCmd runs the engine as a JSON-RPC 2.0 service over stdio (R9.2,
// docs/protocol.md): requests on stdin, answers (and the engine's own
// requests to the host: host/read, host/floor, host/core) on stdout, one
// JSON value per line. The end of stdin or SIGTERM cancels the callbacks
// waiting for the client, answers the requests in flight and exits 0.
func serveCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	maxMessage := fs.Int("max-message", server.DefaultMaxMessage, "the longest message (line) in bytes; a longer one is answered with an error and skipped")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: attune serve [--max-message BYTES] [CONFIG]\n\nRuns the engine as a JSON-RPC 2.0 service over stdin and stdout (protocol version 1,\ndocs/protocol.md), one JSON message per line (or framed by Content-Length headers\nwhen the first message is). CONFIG defaults to attune.toml.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 1 || *maxMessage <= 0 {
		if *maxMessage <= 0 {
			fmt.Fprintf(stderr, "attune serve: --max-message %d: want a number of bytes > 0\n", *maxMessage)
		} else {
			fmt.Fprintf(stderr, "attune serve: one CONFIG at most, got %q\n", fs.Args())
		}
		fs.Usage()
		return 2
	}
	path := "attune.toml"
	if fs.NArg() > 0 {
		path = fs.Arg(0)
	}
	cfg, err := config.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	srv := server.New(stdout, server.Options{
		Engine:     engine.Options{Config: cfg},
		MaxMessage: *maxMessage,
		Log:        slog.New(slog.NewTextHandler(stderr, nil)),
	})
	defer srv.Close()
	if err := srv.Serve(ctx, os.Stdin); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
