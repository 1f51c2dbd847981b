package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"attune/config"
	"attune/engine"
	"attune/server"
)

// serveCmd runs the engine as a JSON-RPC 2.0 service over stdio (SPEC R9.2):
// requests on stdin, answers (and the engine's own requests to the host:
// host/read, host/floor, host/core) on stdout, one JSON object per line.
func serveCmd(args []string, stdout, stderr io.Writer) int {
	path := "attune.toml"
	if len(args) > 0 {
		path = args[0]
	}
	cfg, err := config.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	ctx := context.Background()
	srv := server.New(stdout)
	e, err := engine.New(ctx, engine.Options{Config: cfg, Read: srv.Read, Floor: srv.Floor})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer e.Close()
	srv.Attach(e)
	if err := srv.Serve(ctx, os.Stdin); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
