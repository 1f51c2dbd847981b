package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/hook"
)

const hookUsage = `usage:
  attune hook DIALECT [--config FILE] [--timeout D]   answer one hook event (stdin -> stdout)
  attune hook install DIALECT [--project DIR] [--config FILE] [--http ADDR]
  attune hook uninstall DIALECT [--project DIR]
  attune hook serve DIALECT --listen 127.0.0.1:PORT [--config FILE] [--listen-any]
DIALECT is claude, codex, copilot, cursor or gemini. The configuration is --config, else
$ATTUNE_CONFIG, else attune.toml in $CLAUDE_PROJECT_DIR or the working directory.
`

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
		fmt.Fprintf(stderr, "attune hook: unknown dialect %q (want claude, codex, copilot, cursor or gemini)\n", args[0])
		fmt.Fprint(stderr, hookUsage)
		return 2
	}
	fs := flag.NewFlagSet("attune hook "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFlag := fs.String("config", "", "the attune configuration")
	timeout := fs.Duration("timeout", hook.DefaultTimeout, "the most one event may take, waiting for the session included")
	if code, ok := parseFlags(fs, args[1:]); !ok {
		return code
	}
	data, err := io.ReadAll(io.LimitReader(stdin, hook.MaxEvent+1))
	var ev hook.Event
	if err == nil && len(data) > hook.MaxEvent {
		err = fmt.Errorf("the event is larger than %d bytes", hook.MaxEvent)
		ev = hook.Oversize(d, data)
	} else if err == nil {
		ev, err = d.Parse(data)
	}
	if err != nil {
		// not an event attune can act on: say so; deny a tool call it names
		fmt.Fprintf(stderr, "attune hook %s: %v\n", d.Name(), err)
		if errors.Is(err, hook.ErrUnknownEvent) {
			fmt.Fprintf(stderr, "attune hook %s: answered with no decision; update attune or remove the hook entry for this event\n", d.Name())
		}
		stdout.Write(d.Render(ev, hook.BadEvent(ev, err)))
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
	if ev.Kind == hook.Other { // nothing to decide: answer before opening anything
		return hook.Answer{}
	}
	cwd, _ := os.Getwd()
	path, err := hook.FindConfig(cfgFlag, os.Getenv, os.Getenv("CLAUDE_PROJECT_DIR"), cwd)
	var cfg *config.Config
	if err == nil {
		cfg, err = config.Load(path)
	}
	if err == nil {
		if a, ok := hook.Quick(ctx, cfg, d, ev); ok { // nothing can see the call: no store
			return a
		}
		var rt *hook.Runtime
		rt, err = hook.New(ctx, cfg, hook.Options{Stderr: stderr})
		if err == nil {
			defer rt.Close()
			return rt.Handle(ctx, d, ev)
		}
	}
	fmt.Fprintf(stderr, "attune hook %s: %v\n", d.Name(), err)
	return hook.Failure(ev, err, false)
}

// dialectArg reads the DIALECT argument of install, uninstall and serve.
func dialectArg(what string, args []string, stderr io.Writer) (string, []string, bool) {
	if len(args) == 0 || args[0] != "claude" {
		got := "nothing"
		if len(args) > 0 {
			got = fmt.Sprintf("%q", args[0])
		}
		fmt.Fprintf(stderr, "attune hook %s: want the dialect claude, got %s\n", what, got)
		return "", nil, false
	}
	return args[0], args[1:], true
}

func hookInstallCmd(args []string, stdout, stderr io.Writer) int {
	_, args, ok := dialectArg("install", args, stderr)
	if !ok {
		return 2
	}
	fs := flag.NewFlagSet("attune hook install claude", flag.ContinueOnError)
	fs.SetOutput(stderr)
	project := fs.String("project", ".", "the project whose .claude/settings.json gets the entries")
	cfgFlag := fs.String("config", "", "the attune configuration (default: attune.toml in the project)")
	httpAddr := fs.String("http", "", "install http entries for `attune hook serve claude --listen ADDR` instead of commands")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	dir, err := filepath.Abs(*project)
	if err != nil {
		fmt.Fprintln(stderr, "attune hook install:", err)
		return 1
	}
	in := hook.Install{HTTP: *httpAddr}
	if in.HTTP != "" {
		if _, port, err := net.SplitHostPort(in.HTTP); err != nil || !validPort(port) {
			fmt.Fprintf(stderr, "attune hook install: --http %s: want 127.0.0.1:PORT, the address `attune hook serve claude --listen` answers on\n", in.HTTP)
			return 2
		}
		if *cfgFlag != "" {
			fmt.Fprintln(stderr, "attune hook install: --config is not used with --http: http entries carry no configuration; give it to `attune hook serve claude --config FILE`")
			return 2
		}
		if err := hook.CheckListen(in.HTTP, false); err != nil {
			fmt.Fprintf(stderr, "attune hook install: --http %s: not a loopback address; install writes only loopback hook URLs (127.0.0.1 or ::1), since hook answers decide what the agent may run\n", in.HTTP)
			return 2
		}
	} else {
		cfg := *cfgFlag
		if cfg == "" {
			cfg = filepath.Join(dir, config.DefaultFile)
		}
		if in.Config, err = filepath.Abs(cfg); err != nil {
			fmt.Fprintln(stderr, "attune hook install:", err)
			return 1
		}
		if _, err := config.Load(in.Config); err != nil {
			fmt.Fprintf(stderr, "attune hook install: %v\n", err)
			return 1
		}
		if in.Binary, err = os.Executable(); err != nil {
			fmt.Fprintln(stderr, "attune hook install: cannot find this attune binary:", err)
			return 1
		}
		if err := installableBinary(in.Binary); err != nil {
			fmt.Fprintln(stderr, "attune hook install:", err)
			return 1
		}
	}
	settings := filepath.Join(dir, ".claude", "settings.json")
	if err := hook.InstallClaude(settings, in); err != nil {
		fmt.Fprintln(stderr, "attune hook install:", err)
		return 1
	}
	fmt.Fprintf(stdout, "attune hooks installed in %s (%d events)\n", settings, len(hook.ClaudeEvents()))
	return 0
}

// installableBinary refuses a binary that will not be there when Claude
// Code runs the hooks: go run's temporary build, deleted when go run ends.
func installableBinary(bin string) error {
	p := strings.ReplaceAll(bin, `\`, "/")
	if strings.Contains(p, "/go-build") && strings.Contains(p, "/exe/") {
		return fmt.Errorf("this attune is go run's temporary build (%s), which is deleted when go run ends, so every hook would fail; build attune (go build -o ~/bin/attune ./cmd/attune) and install with that binary", bin)
	}
	return nil
}

// validPort reports whether port is a TCP port number a URL can name.
func validPort(port string) bool {
	n, err := strconv.Atoi(port)
	return err == nil && n > 0 && n < 65536
}

func hookUninstallCmd(args []string, stdout, stderr io.Writer) int {
	_, args, ok := dialectArg("uninstall", args, stderr)
	if !ok {
		return 2
	}
	fs := flag.NewFlagSet("attune hook uninstall claude", flag.ContinueOnError)
	fs.SetOutput(stderr)
	project := fs.String("project", ".", "the project whose .claude/settings.json loses attune's entries")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	settings := filepath.Join(*project, ".claude", "settings.json")
	if _, err := os.Stat(settings); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stdout, "no %s: no attune hooks to remove\n", settings)
		return 0
	}
	if err := hook.UninstallClaude(settings); err != nil {
		fmt.Fprintln(stderr, "attune hook uninstall:", err)
		return 1
	}
	fmt.Fprintf(stdout, "attune hooks removed from %s\n", settings)
	return 0
}

func hookServeCmd(args []string, stdout, stderr io.Writer) int {
	name, args, ok := dialectArg("serve", args, stderr)
	if !ok {
		return 2
	}
	d, _ := hook.Dialects(name)
	fs := flag.NewFlagSet("attune hook serve claude", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8787", "the address to answer on (loopback unless --listen-any)")
	anyAddr := fs.Bool("listen-any", false, "allow a listen address that is not loopback")
	cfgFlag := fs.String("config", "", "the attune configuration")
	timeout := fs.Duration("timeout", hook.DefaultTimeout, "the most one event may take")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if err := hook.CheckListen(*listen, *anyAddr); err != nil {
		fmt.Fprintln(stderr, "attune hook serve:", err)
		return 2
	}
	cwd, _ := os.Getwd()
	path, err := hook.FindConfig(*cfgFlag, os.Getenv, os.Getenv("CLAUDE_PROJECT_DIR"), cwd)
	if err != nil {
		fmt.Fprintln(stderr, "attune hook serve:", err)
		return 1
	}
	ctx := context.Background()
	rt, err := hook.Open(ctx, path, hook.Options{Warm: true, Stderr: stderr})
	if err != nil {
		fmt.Fprintln(stderr, "attune hook serve:", err)
		return 1
	}
	defer rt.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(stderr, "attune hook serve:", err)
		return 1
	}
	fmt.Fprintf(stderr, "attune hook serve %s: answering on http://%s%s\n", name, ln.Addr(), hook.HTTPPath)
	srv := &http.Server{Handler: rt.Handler(d, *timeout), ReadHeaderTimeout: 10 * time.Second}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-stop
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(stderr, "attune hook serve:", err)
		return 1
	}
	return 0
}
