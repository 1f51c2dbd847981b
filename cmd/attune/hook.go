package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"attune/hook"
)

const hookUsage = `usage:
  attune hook DIALECT [--config FILE] [--timeout D]   answer one hook event (stdin -> stdout)
  attune hook install DIALECT [--project DIR] [--config FILE] [--http ADDR]
  attune hook uninstall DIALECT [--project DIR]
  attune hook serve DIALECT --listen 127.0.0.1:PORT [--config FILE] [--listen-any]
DIALECT is claude, codex, cursor or gemini. The configuration is --config, else
$ATTUNE_CONFIG, else attune.toml in $CLAUDE_PROJECT_DIR or the working directory.
`

// maxEvent bounds what a hook reads from stdin.
const maxEvent = 16 << 20

// hookCmd is `attune hook ...`.
func hookCmd(args []string, stdout, stderr io.Writer) int {
	return hookMain(args, os.Stdin, stdout, stderr)
}

func hookMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, hookUsage)
		return 2
	}
	switch args[0] {
	case "install":
		return hookInstallCmd(args[1:], stdout, stderr)
	case "uninstall":
		return hookUninstallCmd(args[1:], stdout, stderr)
	case "serve":
		return hookServeCmd(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, hookUsage)
		return 0
	}
	d, ok := hook.Dialects(args[0])
	if !ok {
		fmt.Fprintf(stderr, "attune hook: unknown dialect %q (want claude, codex, cursor or gemini)\n", args[0])
		fmt.Fprint(stderr, hookUsage)
		return 2
	}
	fs := flag.NewFlagSet("attune hook "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFlag := fs.String("config", "", "the attune configuration")
	timeout := fs.Duration("timeout", hook.DefaultTimeout, "the most one event may take, waiting for the session included")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	data, err := io.ReadAll(io.LimitReader(stdin, maxEvent+1))
	if err == nil && len(data) > maxEvent {
		err = fmt.Errorf("the event is larger than %d bytes", maxEvent)
	}
	var ev hook.Event
	if err == nil {
		ev, err = d.Parse(data)
	}
	if err != nil {
		// not an event attune can act on: say so, take no decision
		fmt.Fprintf(stderr, "attune hook %s: %v\n", d.Name(), err)
		if errors.Is(err, hook.ErrUnknownEvent) {
			fmt.Fprintf(stderr, "attune hook %s: answered with no decision; update attune or remove the hook entry for this event\n", d.Name())
		}
		stdout.Write(d.Render(ev, hook.Answer{}))
		fmt.Fprintln(stdout)
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	done := make(chan hook.Answer, 1)
	go func() { done <- answerEvent(ctx, d, ev, *cfgFlag, stderr) }()
	var a hook.Answer
	select {
	case a = <-done:
	case <-ctx.Done():
		err := fmt.Errorf("no answer within %s (--timeout)", *timeout)
		fmt.Fprintf(stderr, "attune hook %s: %s: %v\n", d.Name(), ev.Name, err)
		a = hook.Failure(ev, err, false)
	}
	stdout.Write(d.Render(ev, a))
	fmt.Fprintln(stdout)
	return 0
}

// answerEvent finds the configuration, opens the runtime and answers.
func answerEvent(ctx context.Context, d hook.Dialect, ev hook.Event, cfgFlag string, stderr io.Writer) hook.Answer {
	cwd, _ := os.Getwd()
	path, err := hook.FindConfig(cfgFlag, os.Getenv, os.Getenv("CLAUDE_PROJECT_DIR"), cwd)
	if err == nil {
		var rt *hook.Runtime
		rt, err = hook.Open(ctx, path, hook.Options{Stderr: stderr})
		if err == nil {
			defer rt.Close()
			return rt.Handle(ctx, d, ev)
		}
	}
	fmt.Fprintf(stderr, "attune hook %s: %v\n", d.Name(), err)
	return hook.Failure(ev, err, false)
}

func hookInstallCmd(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "attune hook install: not available yet")
	return 2
}

func hookUninstallCmd(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "attune hook uninstall: not available yet")
	return 2
}

func hookServeCmd(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "attune hook serve: not available yet")
	return 2
}
