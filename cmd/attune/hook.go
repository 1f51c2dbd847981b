package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/attune-dev/attune/config"
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

// installScope reads --user and --local.
func installScope(harness string, user, local bool) (hook.Scope, error) {
	switch {
	case user && local:
		return 0, errors.New("--user and --local name different files: give one")
	case user:
		return hook.ScopeUser, nil
	case local && harness != "claude":
		return 0, fmt.Errorf("--local is Claude Code's .claude/settings.local.json; %s has no local settings file", harness)
	case local:
		return hook.ScopeLocal, nil
	}
	return hook.ScopeProject, nil
}

// installWhere is where the hook files of a project and of this user are.
func installWhere(project string) (hook.Where, error) {
	dir, err := filepath.Abs(project)
	if err != nil {
		return hook.Where{}, err
	}
	home, _ := os.UserHomeDir()
	return hook.Where{Project: dir, Home: home, Getenv: os.Getenv}, nil
}

func hookInstallCmd(args []string, stdout, stderr io.Writer) int {
	harness, args, ok := installArg("install", args, stderr)
	if !ok {
		return 2
	}
	fs := flag.NewFlagSet("attune hook install "+harness, flag.ContinueOnError)
	fs.SetOutput(stderr)
	project := fs.String("project", ".", "the project whose hook file gets the entries")
	user := fs.Bool("user", false, "install into this user's own configuration of the harness (every project)")
	local := fs.Bool("local", false, "install into .claude/settings.local.json, the project's unshared Claude Code settings")
	cfgFlag := fs.String("config", "", "the attune configuration (default: attune.toml in the project; with --user, the one each project has)")
	httpAddr := fs.String("http", "", "install http entries for `attune hook serve claude --listen ADDR` instead of commands (claude)")
	binary := fs.String("binary", "", "the attune binary the hooks run (default: this one)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	scope, err := installScope(harness, *user, *local)
	if err != nil {
		fmt.Fprintln(stderr, "attune hook install:", err)
		return 2
	}
	where, err := installWhere(*project)
	if err != nil {
		fmt.Fprintln(stderr, "attune hook install:", err)
		return 1
	}
	in := hook.Install{HTTP: *httpAddr}
	if in.HTTP != "" {
		if harness != "claude" {
			fmt.Fprintf(stderr, "attune hook install: --http is for Claude Code (attune hook serve claude); %s runs hook commands\n", harness)
			return 2
		}
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
		// the secret `hook serve` requires, beside the project's configuration
		if in.Token, err = hook.LoadToken(where.Project); err != nil {
			fmt.Fprintln(stderr, "attune hook install:", err)
			return 1
		}
	} else {
		cfg := *cfgFlag
		if cfg == "" && scope != hook.ScopeUser {
			cfg = filepath.Join(where.Project, config.DefaultFile)
		}
		if cfg != "" {
			if in.Config, err = filepath.Abs(cfg); err != nil {
				fmt.Fprintln(stderr, "attune hook install:", err)
				return 1
			}
			if _, err := config.Load(in.Config); err != nil {
				fmt.Fprintf(stderr, "attune hook install: %v\n", err)
				return 1
			}
		}
		in.Binary = *binary
		if in.Binary == "" {
			if in.Binary, err = os.Executable(); err != nil {
				fmt.Fprintln(stderr, "attune hook install: cannot find this attune binary:", err)
				return 1
			}
		}
		if in.Binary, err = filepath.Abs(in.Binary); err != nil {
			fmt.Fprintln(stderr, "attune hook install:", err)
			return 1
		}
		if err := installableBinary(in.Binary); err != nil {
			fmt.Fprintln(stderr, "attune hook install:", err)
			return 1
		}
		if st, err := os.Stat(in.Binary); err != nil || st.IsDir() {
			fmt.Fprintf(stderr, "attune hook install: --binary %s: no such program\n", in.Binary)
			return 1
		}
	}
	file, err := hook.HookFile(harness, scope, where)
	if err != nil {
		fmt.Fprintln(stderr, "attune hook install:", err)
		return 2
	}
	res, err := hook.InstallHooks(harness, file, in, where)
	if err != nil {
		fmt.Fprintln(stderr, "attune hook install:", err)
		return 1
	}
	if res.Unchanged {
		fmt.Fprintf(stdout, "attune hooks already installed in %s (%d events: %s)\n", res.File, len(res.Events), strings.Join(res.Events, ", "))
	} else {
		fmt.Fprintf(stdout, "attune hooks installed in %s (%d events: %s)\n", res.File, len(res.Events), strings.Join(res.Events, ", "))
	}
	if res.Trust != "" {
		fmt.Fprintf(stdout, "trusted in %s ([hooks.state] trusted_hash for each entry)\n", res.Trust)
	}
	if in.HTTP == "" {
		fmt.Fprintf(stdout, "hooks run: %s\n", in.Binary)
	}
	notes := configNotes(in)
	if cfgFile := in.Config; cfgFile != "" || in.HTTP == "" {
		if cfgFile == "" {
			cfgFile = filepath.Join(where.Project, config.DefaultFile)
		}
		notes = append(notes, guardrailsNotes(cfgFile)...)
	}
	for _, n := range append(notes, harnessNotes(harness, scope, where)...) {
		fmt.Fprintln(stdout, n)
	}
	return 0
}

// configNotes says what the installed hooks answer with: the
// configuration they load.
func configNotes(in hook.Install) []string {
	switch {
	case in.HTTP != "":
		return []string{"configuration: the one `attune hook serve claude` loads"}
	case in.Config != "":
		return []string{"configuration: " + in.Config}
	}
	return []string{"configuration: attune.toml of each project (or $ATTUNE_CONFIG)"}
}

// guardrailsPolicies are the policies of the engine's guardrails program
// (behaviors/guardrails.lua), in the order its docs list them.
var guardrailsPolicies = []string{"protected_paths", "destructive_commands", "git_hygiene", "secrets",
	"read_before_edit", "test_gate", "call_limits", "session_context", "rules"}

// guardrailsNotes says which guardrails policies each bot of the
// configuration in file turns on; nothing when it cannot be loaded or no
// bot selects guardrails.
func guardrailsNotes(file string) []string {
	cfg, err := config.Load(file)
	if err != nil {
		return nil
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(cfg.Bots)) {
		b := cfg.Bots[name]
		if !slices.Contains(b.Behaviors, "guardrails") {
			continue
		}
		c := b.ConfigFor("guardrails")
		var on []string
		for _, p := range guardrailsPolicies {
			v, ok := c[p]
			if !ok || v == false {
				continue
			}
			if m, isMap := v.(map[string]any); isMap && m["enabled"] == false {
				continue
			}
			on = append(on, p)
		}
		if len(on) == 0 {
			out = append(out, "guardrails (bot "+name+"): no policy on; add [bots."+name+".config.guardrails.POLICY] tables")
			continue
		}
		out = append(out, "guardrails (bot "+name+"): "+strings.Join(on, ", "))
	}
	return out
}

// harnessNotes is what a user must still do for the harness to run the
// hooks.
func harnessNotes(harness string, scope hook.Scope, w hook.Where) []string {
	switch harness {
	case "codex":
		if scope != hook.ScopeUser {
			return []string{"Codex reads .codex/hooks.json only in a trusted project: trust_level = \"trusted\" under [projects.\"" + w.Project + "\"] in config.toml (Codex asks on first start)"}
		}
	case "gemini":
		if scope != hook.ScopeUser {
			return []string{"Gemini CLI runs a project's hooks only in a trusted folder (it asks on first start; --skip-trust turns them off)"}
		}
	case "copilot":
		if scope != hook.ScopeUser {
			return []string{"Copilot CLI runs .github/hooks only in a trusted folder (it asks on first start)"}
		}
	}
	return nil
}

// installableBinary refuses a binary that will not be there when the
// harness runs the hooks (hook.CheckBinary), Go's build cache found as the
// go command says when there is one (`go env -w GOCACHE` is not in the
// environment).
func installableBinary(bin string) error {
	var caches []string
	if gobin, err := exec.LookPath("go"); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, gobin, "env", "GOCACHE").Output(); err == nil {
			if c := strings.TrimSpace(string(out)); c != "" && c != "off" {
				caches = append(caches, c)
			}
		}
	}
	return hook.CheckBinary(bin, caches...)
}

// validPort reports whether port is a TCP port number a URL can name.
func validPort(port string) bool {
	n, err := strconv.Atoi(port)
	return err == nil && n > 0 && n < 65536
}

func hookUninstallCmd(args []string, stdout, stderr io.Writer) int {
	harness, args, ok := installArg("uninstall", args, stderr)
	if !ok {
		return 2
	}
	fs := flag.NewFlagSet("attune hook uninstall "+harness, flag.ContinueOnError)
	fs.SetOutput(stderr)
	project := fs.String("project", ".", "the project whose hook file loses attune's entries")
	user := fs.Bool("user", false, "uninstall from this user's own configuration of the harness")
	local := fs.Bool("local", false, "uninstall from .claude/settings.local.json")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	scope, err := installScope(harness, *user, *local)
	if err != nil {
		fmt.Fprintln(stderr, "attune hook uninstall:", err)
		return 2
	}
	where, err := installWhere(*project)
	if err != nil {
		fmt.Fprintln(stderr, "attune hook uninstall:", err)
		return 1
	}
	file, err := hook.HookFile(harness, scope, where)
	if err != nil {
		fmt.Fprintln(stderr, "attune hook uninstall:", err)
		return 2
	}
	if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stdout, "no %s: no attune hooks to remove\n", file)
		return 0
	}
	res, err := hook.UninstallHooks(harness, file, where)
	if err != nil {
		fmt.Fprintln(stderr, "attune hook uninstall:", err)
		return 1
	}
	if res.Unchanged {
		fmt.Fprintf(stdout, "no attune hooks in %s: nothing removed\n", res.File)
		return 0
	}
	fmt.Fprintf(stdout, "attune hooks removed from %s (%s)\n", res.File, strings.Join(res.Events, ", "))
	if res.Trust != "" {
		fmt.Fprintf(stdout, "their trust entries removed from %s\n", res.Trust)
	}
	return 0
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
	cwd, _ := os.Getwd()
	path, err := harness.FindConfig(*cfgFlag, os.Getenv, os.Getenv("CLAUDE_PROJECT_DIR"), cwd)
	if err != nil {
		fmt.Fprintln(stderr, "attune hook serve:", err)
		return 1
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		fmt.Fprintln(stderr, "attune hook serve:", err)
		return 1
	}
	token, err := hook.LoadToken(filepath.Dir(abs))
	if err != nil {
		fmt.Fprintln(stderr, "attune hook serve:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rt, err := harness.Open(ctx, path, harness.Options{Warm: true, Stderr: stderr})
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
	fmt.Fprintf(stderr, "attune hook serve %s: answering on http://%s%s (requests carry the %s header of %s)\n", name, ln.Addr(), hook.HTTPPath, hook.TokenHeader, hook.TokenFile(filepath.Dir(abs)))
	if err := hook.Serve(ctx, rt, ln, d, hook.ServeOptions{Timeout: *timeout, Token: token, MaxConns: *maxConns, MaxWarm: *maxWarm}); err != nil {
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
	cwd, _ := os.Getwd()
	path, err := harness.FindConfig(*cfgFlag, os.Getenv, os.Getenv("CLAUDE_PROJECT_DIR"), cwd)
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
		fmt.Fprintln(stderr, "attune hook serve:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := harness.ListenWarm(path)
	if err != nil {
		fmt.Fprintln(stderr, "attune hook serve:", err)
		if errors.Is(err, harness.ErrWarmRunning) {
			return 0
		}
		return 1
	}
	defer ln.Close()
	rt, err := harness.New(ctx, cfg, harness.Options{Warm: true, Stderr: stderr})
	if err != nil {
		fmt.Fprintln(stderr, "attune hook serve:", err)
		return 1
	}
	defer rt.Close()
	fmt.Fprintf(stderr, "attune hook serve: answering the command hooks of %s on %s\n", path, ln.Path)
	err = rt.ServeWarm(ctx, ln, harness.WarmOptions{Timeout: *timeout, Idle: *idle, MaxWarm: *maxWarm, Ident: ident, Config: path,
		Recheck: func() (string, error) {
			c, err := config.Load(path)
			if err != nil {
				return "", err
			}
			return harness.Identity(c)
		}})
	if err != nil {
		fmt.Fprintln(stderr, "attune hook serve:", err)
		return 1
	}
	return 0
}
