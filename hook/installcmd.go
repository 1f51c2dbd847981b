package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/attune-dev/attune/config"
)

// UsageError is a request wrong as given (its flags contradict each other
// or name what cannot be): the command's exit status is 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usage(text string) error { return &UsageError{errors.New(text)} }

func usagef(format string, args ...any) error { return &UsageError{fmt.Errorf(format, args...)} }

// InstallRequest is `attune hook install HARNESS` and `attune hook
// uninstall HARNESS`: the harness and the flags.
type InstallRequest struct {
	Harness string
	// Project is the project whose hook file gets the entries (--project).
	Project string
	// User and Local pick this user's own configuration of the harness, or
	// Claude Code's .claude/settings.local.json (--user, --local).
	User, Local bool
	// Config is the configuration the hooks load (--config; "": attune.toml
	// in the project, or with User the one each project has).
	Config string
	// HTTP installs http entries for `attune hook serve claude --listen
	// HTTP` instead of commands (--http).
	HTTP string
	// Binary is the attune binary the hooks run (--binary; "": this one).
	Binary string
}

// RunInstall installs the hooks of r and says on stdout where, what they
// run and what the user must still do. A *UsageError is a request wrong as
// given.
func RunInstall(r InstallRequest, stdout io.Writer) error {
	harness := r.Harness
	scope, err := installScope(harness, r.User, r.Local)
	if err != nil {
		return err
	}
	where, err := installWhere(r.Project)
	if err != nil {
		return err
	}
	in := Install{HTTP: r.HTTP}
	if in.HTTP != "" {
		if harness != "claude" {
			return usagef("--http is for Claude Code (attune hook serve claude); %s runs hook commands", harness)
		}
		if _, port, err := net.SplitHostPort(in.HTTP); err != nil || !validPort(port) {
			return usagef("--http %s: want 127.0.0.1:PORT, the address `attune hook serve claude --listen` answers on", in.HTTP)
		}
		if r.Config != "" {
			return usage("--config is not used with --http: http entries carry no configuration; give it to `attune hook serve claude --config FILE`")
		}
		if err := CheckListen(in.HTTP, false); err != nil {
			return usagef("--http %s: not a loopback address; install writes only loopback hook URLs (127.0.0.1 or ::1), since hook answers decide what the agent may run", in.HTTP)
		}
		// the secret `hook serve` requires, beside the project's configuration
		if in.Token, err = LoadToken(where.Project); err != nil {
			return err
		}
	} else {
		cfg := r.Config
		if cfg == "" && scope != ScopeUser {
			cfg = filepath.Join(where.Project, config.DefaultFile)
		}
		if cfg != "" {
			if in.Config, err = filepath.Abs(cfg); err != nil {
				return err
			}
			if _, err := config.Load(in.Config); err != nil {
				return err
			}
		}
		in.Binary = r.Binary
		if in.Binary == "" {
			if in.Binary, err = os.Executable(); err != nil {
				return fmt.Errorf("cannot find this attune binary: %w", err)
			}
		}
		if in.Binary, err = filepath.Abs(in.Binary); err != nil {
			return err
		}
		if err := installableBinary(in.Binary); err != nil {
			return err
		}
		if st, err := os.Stat(in.Binary); err != nil || st.IsDir() {
			return fmt.Errorf("--binary %s: no such program", in.Binary)
		}
	}
	file, err := HookFile(harness, scope, where)
	if err != nil {
		return &UsageError{err}
	}
	res, err := InstallHooks(harness, file, in, where)
	if err != nil {
		return err
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
	return nil
}

// RunUninstall removes attune's hook entries of r (Harness, Project, User,
// Local) and says on stdout what it removed.
func RunUninstall(r InstallRequest, stdout io.Writer) error {
	scope, err := installScope(r.Harness, r.User, r.Local)
	if err != nil {
		return err
	}
	where, err := installWhere(r.Project)
	if err != nil {
		return err
	}
	file, err := HookFile(r.Harness, scope, where)
	if err != nil {
		return &UsageError{err}
	}
	if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stdout, "no %s: no attune hooks to remove\n", file)
		return nil
	}
	res, err := UninstallHooks(r.Harness, file, where)
	if err != nil {
		return err
	}
	if res.Unchanged {
		fmt.Fprintf(stdout, "no attune hooks in %s: nothing removed\n", res.File)
		return nil
	}
	fmt.Fprintf(stdout, "attune hooks removed from %s (%s)\n", res.File, strings.Join(res.Events, ", "))
	if res.Trust != "" {
		fmt.Fprintf(stdout, "their trust entries removed from %s\n", res.Trust)
	}
	return nil
}

// installScope reads --user and --local.
func installScope(harness string, user, local bool) (Scope, error) {
	switch {
	case user && local:
		return 0, usage("--user and --local name different files: give one")
	case user:
		return ScopeUser, nil
	case local && harness != "claude":
		return 0, usagef("--local is Claude Code's .claude/settings.local.json; %s has no local settings file", harness)
	case local:
		return ScopeLocal, nil
	}
	return ScopeProject, nil
}

// installWhere is where the hook files of a project and of this user are.
func installWhere(project string) (Where, error) {
	dir, err := filepath.Abs(project)
	if err != nil {
		return Where{}, err
	}
	home, _ := os.UserHomeDir()
	return Where{Project: dir, Home: home, Getenv: os.Getenv}, nil
}

// configNotes says what the installed hooks answer with: the
// configuration they load.
func configNotes(in Install) []string {
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
func harnessNotes(harness string, scope Scope, w Where) []string {
	switch harness {
	case "codex":
		if scope != ScopeUser {
			return []string{"Codex reads .codex/hooks.json only in a trusted project: trust_level = \"trusted\" under [projects.\"" + w.Project + "\"] in config.toml (Codex asks on first start)"}
		}
	case "gemini":
		if scope != ScopeUser {
			return []string{"Gemini CLI runs a project's hooks only in a trusted folder (it asks on first start; --skip-trust turns them off)"}
		}
	case "copilot":
		if scope != ScopeUser {
			return []string{"Copilot CLI runs .github/hooks only in a trusted folder (it asks on first start)"}
		}
	}
	return nil
}

// installableBinary refuses a binary that will not be there when the
// harness runs the hooks (CheckBinary), Go's build cache found as the
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
	return CheckBinary(bin, caches...)
}

// validPort reports whether port is a TCP port number a URL can name.
func validPort(port string) bool {
	n, err := strconv.Atoi(port)
	return err == nil && n > 0 && n < 65536
}
