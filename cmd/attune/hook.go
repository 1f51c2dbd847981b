package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/attune-dev/attune/harness"
	"github.com/attune-dev/attune/hook"
)

const hookUsage = `usage:
  attune hook DIALECT [--config FILE] [--timeout D]   answer one hook event (stdin -> stdout)
  attune hook install HARNESS [--project DIR | --user | --local] [--config FILE] [--binary PATH] [--http ADDR]
  attune hook uninstall HARNESS [--project DIR | --user | --local]
  attune hook serve DIALECT --listen 127.0.0.1:PORT [--config FILE] [--listen-any]
  attune hook serve [DIALECT] --socket [--config FILE] [--idle D] [--max-warm N]   the warm server command hooks hand events to
  attune hook doctor [--project DIR]   check an installed project's hooks
DIALECT is claude, codex, copilot, cursor or gemini; HARNESS is claude, codex, copilot,
cursor or gemini (install writes its own hook file; --user the user's own,
--local Claude Code's .claude/settings.local.json). The configuration is --config, else
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
	case "doctor":
		return hookDoctorCmd(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, hookUsage)
		return 0
	}
	d, ok := harness.Dialects(args[0])
	if !ok {
		fmt.Fprintf(stderr, "attune hook: unknown dialect %q (want claude, codex, copilot, cursor or gemini)\n", args[0])
		fmt.Fprint(stderr, hookUsage)
		return 2
	}
	fs := flag.NewFlagSet("attune hook "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFlag := fs.String("config", "", "the attune configuration")
	timeout := fs.Duration("timeout", harness.DefaultTimeout, "the most one event may take, waiting for the session included")
	if code, ok := parseFlags(fs, args[1:]); !ok {
		return code
	}
	hook.Command(d, hook.CommandOptions{Config: *cfgFlag, Timeout: *timeout, Stdin: stdin, Stdout: stdout, Stderr: stderr})
	return 0
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

// installArg reads the HARNESS argument of install and uninstall.
func installArg(what string, args []string, stderr io.Writer) (string, []string, bool) {
	if len(args) == 0 || !slices.Contains(hook.Harnesses(), args[0]) {
		got := "nothing"
		if len(args) > 0 {
			got = fmt.Sprintf("%q", args[0])
		}
		fmt.Fprintf(stderr, "attune hook %s: want the harness (%s), got %s\n", what, strings.Join(hook.Harnesses(), ", "), got)
		return "", nil, false
	}
	return args[0], args[1:], true
}

func hookInstallCmd(args []string, stdout, stderr io.Writer) int {
	name, args, ok := installArg("install", args, stderr)
	if !ok {
		return 2
	}
	fs := flag.NewFlagSet("attune hook install "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	r := hook.InstallRequest{Harness: name}
	fs.StringVar(&r.Project, "project", ".", "the project whose hook file gets the entries")
	fs.BoolVar(&r.User, "user", false, "install into this user's own configuration of the harness (every project)")
	fs.BoolVar(&r.Local, "local", false, "install into .claude/settings.local.json, the project's unshared Claude Code settings")
	fs.StringVar(&r.Config, "config", "", "the attune configuration (default: attune.toml in the project; with --user, the one each project has)")
	fs.StringVar(&r.HTTP, "http", "", "install http entries for `attune hook serve claude --listen ADDR` instead of commands (claude)")
	fs.StringVar(&r.Binary, "binary", "", "the attune binary the hooks run (default: this one)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	return exitOf("attune hook install", hook.RunInstall(r, stdout), stderr)
}

func hookUninstallCmd(args []string, stdout, stderr io.Writer) int {
	name, args, ok := installArg("uninstall", args, stderr)
	if !ok {
		return 2
	}
	fs := flag.NewFlagSet("attune hook uninstall "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	r := hook.InstallRequest{Harness: name}
	fs.StringVar(&r.Project, "project", ".", "the project whose hook file loses attune's entries")
	fs.BoolVar(&r.User, "user", false, "uninstall from this user's own configuration of the harness")
	fs.BoolVar(&r.Local, "local", false, "uninstall from .claude/settings.local.json")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	return exitOf("attune hook uninstall", hook.RunUninstall(r, stdout), stderr)
}

// exitOf is the exit status of a hook command's outcome: 0, 2 for a
// request wrong as given (hook.UsageError), else 1; what went wrong goes
// to stderr after who.
func exitOf(who string, err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, who+":", err)
	if u := (*hook.UsageError)(nil); errors.As(err, &u) {
		return 2
	}
	return 1
}

func hookServeCmd(args []string, stdout, stderr io.Writer) int {
	if slices.Contains(args, "--socket") || slices.Contains(args, "-socket") {
		return hookServeSocketCmd(args, stderr)
	}
	name, args, ok := dialectArg("serve", args, stderr)
	if !ok {
		return 2
	}
	d, _ := harness.Dialects(name)
	fs := flag.NewFlagSet("attune hook serve claude", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8787", "the address to answer on (loopback unless --listen-any)")
	anyAddr := fs.Bool("listen-any", false, "allow a listen address that is not loopback")
	cfgFlag := fs.String("config", "", "the attune configuration")
	timeout := fs.Duration("timeout", harness.DefaultTimeout, "the most one event may take, reading its body included")
	maxConns := fs.Int("max-conns", hook.DefaultMaxConns, "the connections served at once; past it a tool call is denied at once")
	maxWarm := fs.Int("max-warm", hook.DefaultMaxWarm, "the sessions kept warm; past it the least recently used is stopped")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if err := hook.CheckListen(*listen, *anyAddr); err != nil {
		fmt.Fprintln(stderr, "attune hook serve:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := hook.ListenAndServe(ctx, d, hook.ListenOptions{Listen: *listen, Config: *cfgFlag, Stderr: stderr,
		ServeOptions: hook.ServeOptions{Timeout: *timeout, MaxConns: *maxConns, MaxWarm: *maxWarm}})
	if err != nil {
		fmt.Fprintln(stderr, "attune hook serve:", err)
		return 1
	}
	return 0
}

// hookDoctorCmd is `attune hook doctor [--project DIR]`: each check of an
// installed project, ok or FAIL with what to fix; exit 1 on any failure.
func hookDoctorCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("attune hook doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	project := fs.String("project", ".", "the project whose hook entries are checked")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	dir, err := filepath.Abs(*project)
	if err != nil {
		fmt.Fprintln(stderr, "attune hook doctor:", err)
		return 1
	}
	failed := 0
	for _, c := range hook.Doctor(context.Background(), hook.DoctorOptions{Project: dir, Version: buildVersion()}) {
		if c.OK {
			fmt.Fprintf(stdout, "ok   %s: %s\n", c.Name, c.Detail)
			continue
		}
		failed++
		fmt.Fprintf(stdout, "FAIL %s: %s\n     fix: %s\n", c.Name, c.Detail, c.Fix)
	}
	if failed > 0 {
		fmt.Fprintf(stdout, "%d checks failed\n", failed)
		return 1
	}
	fmt.Fprintln(stdout, "every check passed")
	return 0
}

// buildVersion is what `attune version` prints for this binary: hook
// doctor compares an installed binary's with it.
func buildVersion() string {
	var b strings.Builder
	versionCmd(nil, &b, io.Discard)
	return strings.TrimSpace(b.String())
}

// hookServeSocketCmd is `attune hook serve [DIALECT] --socket`: the warm
// server that `attune hook DIALECT` of the same configuration hands its
// events to, on this user's socket for it (harness/handoff.go). It answers
// every dialect: each event names its own.
func hookServeSocketCmd(args []string, stderr io.Writer) int {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if _, ok := harness.Dialects(args[0]); !ok {
			fmt.Fprintf(stderr, "attune hook serve: unknown dialect %q (want claude, codex, copilot, cursor or gemini, or none with --socket)\n", args[0])
			return 2
		}
		args = args[1:]
	}
	fs := flag.NewFlagSet("attune hook serve --socket", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Bool("socket", true, "answer command hooks' hand-offs on this user's socket for the configuration")
	cfgFlag := fs.String("config", "", "the attune configuration")
	timeout := fs.Duration("timeout", harness.DefaultTimeout, "the most one event may take")
	idle := fs.Duration("idle", 0, "exit after this long without an event (0: never)")
	maxWarm := fs.Int("max-warm", hook.DefaultMaxWarm, "the sessions kept warm; past it the least recently used is stopped")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := hook.ServeSocket(ctx, hook.SocketOptions{Config: *cfgFlag, Timeout: *timeout, Idle: *idle, MaxWarm: *maxWarm, Stderr: stderr})
	if err != nil {
		fmt.Fprintln(stderr, "attune hook serve:", err)
		if errors.Is(err, harness.ErrWarmRunning) {
			return 0
		}
		return 1
	}
	return 0
}
