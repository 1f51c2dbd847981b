package hook

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/harness"
)

// SocketOptions are `attune hook serve --socket`'s.
type SocketOptions struct {
	// Config is --config ("": harness.FindConfig's search).
	Config string
	// Timeout bounds one event; Idle ends the server after that long
	// without one (0: never); MaxWarm bounds the sessions kept warm.
	Timeout, Idle time.Duration
	MaxWarm       int
	// Stderr hears where it answers and what goes wrong.
	Stderr io.Writer
}

// ServeSocket is `attune hook serve --socket`: the warm server that
// `attune hook DIALECT` of the same configuration hands its events to, on
// this user's socket for it (harness/handoff.go), until ctx is done. One
// already serving the configuration is harness.ErrWarmRunning.
func ServeSocket(ctx context.Context, o SocketOptions) error {
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	cwd, _ := os.Getwd()
	path, err := harness.FindConfig(o.Config, os.Getenv, os.Getenv("CLAUDE_PROJECT_DIR"), cwd)
	if err == nil {
		path, err = filepath.Abs(path)
	}
	var cfg *config.Config
	if err == nil {
		cfg, err = config.Load(path)
	}
	var ident string
	if err == nil {
		ident, err = harness.Identity(cfg)
	}
	if err != nil {
		return err
	}
	ln, err := harness.ListenWarm(path)
	if err != nil {
		return err
	}
	defer ln.Close()
	rt, err := harness.New(ctx, cfg, harness.Options{Warm: true, Stderr: o.Stderr})
	if err != nil {
		return err
	}
	defer rt.Close()
	fmt.Fprintf(o.Stderr, "attune hook serve: answering the command hooks of %s on %s\n", path, ln.Path)
	return rt.ServeWarm(ctx, ln, harness.WarmOptions{Timeout: o.Timeout, Idle: o.Idle, MaxWarm: o.MaxWarm, Ident: ident, Config: path,
		Recheck: func() (string, error) {
			c, err := config.Load(path)
			if err != nil {
				return "", err
			}
			return harness.Identity(c)
		}})
}
