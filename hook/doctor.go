package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/harness"
)

// Check is one finding of Doctor: what was checked, whether it holds,
// and, when it does not, what to do.
type Check struct {
	Name   string
	OK     bool
	Detail string
	Fix    string
}

// DoctorOptions say what Doctor checks.
type DoctorOptions struct {
	// Project is the project folder whose harness files hold the entries.
	Project string
	// Version is this attune's version (attune version); an installed
	// binary that prints another is reported.
	Version string
}

// harnessFiles are the files of the harnesses' hook entries, by dialect,
// relative to the project.
var harnessFiles = []struct{ dialect, file string }{
	{"claude", filepath.Join(".claude", "settings.json")},
	{"claude", filepath.Join(".claude", "settings.local.json")},
	{"codex", filepath.Join(".codex", "hooks.json")},
	{"codex", filepath.Join(".codex", "config.json")},
	{"gemini", filepath.Join(".gemini", "settings.json")},
	{"cursor", filepath.Join(".cursor", "hooks.json")},
	{"copilot", filepath.Join(".github", "hooks", "attune.json")},
}

// attuneEntry matches a command entry of attune's: BIN ... hook DIALECT.
var attuneEntry = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bhook\s+(claude|codex|gemini|cursor|copilot)\b`) })

// Doctor checks an installed project: every harness file there that holds
// attune's hook entries, each entry's binary (present, executable, the
// same version as this attune), the configuration it runs (loads), its
// store (opens), and a dry-run PreToolUse through the configuration's
// programs (on a memory store: nothing is journaled), or, for an http
// entry, that `hook serve` answers it and takes its token.
func Doctor(ctx context.Context, o DoctorOptions) []Check {
	var out []Check
	add := func(c Check) { out = append(out, c) }
	found := 0
	for _, hf := range harnessFiles {
		path := filepath.Join(o.Project, hf.file)
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			add(Check{Name: hf.file, Detail: err.Error(), Fix: "make it readable"})
			continue
		}
		var doc any
		if err := json.Unmarshal(data, &doc); err != nil {
			add(Check{Name: hf.file, Detail: "not JSON: " + err.Error(), Fix: "repair the file, then run attune hook install " + hf.dialect + " again"})
			continue
		}
		cmds, urls := entries(doc)
		if len(cmds)+len(urls) == 0 {
			continue
		}
		found++
		add(Check{Name: hf.file, OK: true, Detail: fmt.Sprintf("%d attune hook entries", len(cmds)+len(urls))})
		for _, c := range cmds {
			out = append(out, doctorCommand(ctx, o, hf.dialect, hf.file, c)...)
		}
		for _, u := range urls {
			out = append(out, doctorURL(ctx, o, u.url, u.token))
		}
	}
	if found == 0 {
		add(Check{Name: "hook entries", Detail: "no harness file in " + o.Project + " holds attune's hook entries",
			Fix: "run attune hook install claude --project " + o.Project})
	}
	return out
}

type urlEntry struct{ url, token string }

// entries walks a harness file for attune's command entries and http
// entries, whatever the file's shape.
func entries(v any) (cmds []string, urls []urlEntry) {
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if c, ok := x["command"].(string); ok && attuneEntry().MatchString(c) && !slices.Contains(cmds, c) {
				cmds = append(cmds, c)
			}
			for _, k := range []string{"bash", "powershell"} { // Copilot's entries
				if c, ok := x[k].(string); ok && attuneEntry().MatchString(c) && !slices.Contains(cmds, c) {
					cmds = append(cmds, c)
				}
			}
			if u, ok := x["url"].(string); ok && strings.Contains(u, "/attune/hook/") {
				tok := ""
				if h, ok := x["headers"].(map[string]any); ok {
					tok, _ = h[TokenHeader].(string)
				}
				if !slices.ContainsFunc(urls, func(e urlEntry) bool { return e.url == u }) {
					urls = append(urls, urlEntry{u, tok})
				}
			}
			for _, k := range sortedKeys(x) {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return cmds, urls
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func doctorCommand(ctx context.Context, o DoctorOptions, dialect, file, command string) []Check {
	reinstall := "run attune hook install " + dialect + " --project " + o.Project + " with a built attune (go build -o ~/bin/attune ./cmd/attune)"
	argv := commandArgv(command)
	if len(argv) == 0 {
		return []Check{{Name: "binary", Detail: fmt.Sprintf("%s: empty command", file), Fix: reinstall}}
	}
	bin := argv[0]
	var out []Check
	st, err := os.Stat(bin)
	switch {
	case err != nil:
		return append(out, Check{Name: "binary", Detail: fmt.Sprintf("%s runs %s, which is missing (%v): every hook fails, and the harness lets tool calls through unless the entry blocks on failure", file, bin, err), Fix: reinstall})
	case st.IsDir() || st.Mode().Perm()&0o111 == 0 && filepath.Ext(bin) != ".exe":
		return append(out, Check{Name: "binary", Detail: fmt.Sprintf("%s runs %s, which is not an executable file", file, bin), Fix: reinstall})
	}
	out = append(out, Check{Name: "binary", OK: true, Detail: bin})
	vctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	v, err := exec.CommandContext(vctx, bin, "version").Output()
	cancel()
	got := strings.TrimSpace(string(v))
	switch {
	case err != nil:
		out = append(out, Check{Name: "version", Detail: fmt.Sprintf("%s version: %v (an attune too old to say, or not attune)", bin, err), Fix: reinstall})
	case o.Version != "" && got != o.Version:
		out = append(out, Check{Name: "version", Detail: fmt.Sprintf("%s is %q, this attune is %q", bin, oneLine(got), oneLine(o.Version)), Fix: reinstall + ", or run this check with the installed one"})
	default:
		out = append(out, Check{Name: "version", OK: true, Detail: oneLine(got)})
	}
	cfgPath := ""
	for k := 1; k+1 < len(argv); k++ {
		if argv[k] == "--config" || argv[k] == "-config" {
			cfgPath = argv[k+1]
		}
	}
	if cfgPath == "" {
		p, err := harness.FindConfig("", func(string) string { return "" }, o.Project, o.Project)
		if err != nil {
			return append(out, Check{Name: "config", Detail: err.Error(), Fix: "write " + filepath.Join(o.Project, config.DefaultFile) + " or install with --config FILE"})
		}
		cfgPath = p
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return append(out, Check{Name: "config", Detail: err.Error(), Fix: "fix the configuration (attune check " + cfgPath + ")"})
	}
	out = append(out, Check{Name: "config", OK: true, Detail: cfgPath})
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	st2, err := engine.OpenStore(sctx, cfg)
	if err != nil {
		return append(out, Check{Name: "store", Detail: err.Error(), Fix: "fix engine.store in " + cfgPath})
	}
	st2.Close()
	out = append(out, Check{Name: "store", OK: true, Detail: cfg.Engine.Store})
	out = append(out, dryRun(sctx, cfg, dialect))
	return out
}

// dryRun answers a PreToolUse through the configuration's programs, on a
// memory store.
func dryRun(ctx context.Context, cfg *config.Config, dialect string) Check {
	d, ok := harness.Dialects(dialect)
	if !ok {
		d = harness.Claude()
	}
	var log bytes.Buffer
	rt, err := harness.New(ctx, cfg, harness.Options{Stderr: &log, Store: engine.NewMemoryStore()})
	if err != nil {
		return Check{Name: "dry run", Detail: err.Error(), Fix: "fix the configuration or its programs (attune check " + cfg.File + ")"}
	}
	defer rt.Close()
	ev := harness.Strict(d)
	ev.Session, ev.Tool, ev.ToolUseID, ev.ToolInput = "attune-doctor", "attune-doctor", "attune-doctor", map[string]any{}
	a := rt.Handle(ctx, d, ev)
	if strings.HasSuffix(a.Reason, "(attune fails closed)") {
		return Check{Name: "dry run", Detail: "a PreToolUse is denied: " + a.Reason, Fix: "fix what the reason says (attune check " + cfg.File + ")"}
	}
	what := a.Decision
	if what == "" {
		what = "no decision"
	}
	return Check{Name: "dry run", OK: true, Detail: "a PreToolUse is answered (" + what + ")"}
}

func doctorURL(ctx context.Context, o DoctorOptions, url, token string) Check {
	fix := "start attune hook serve with the project's configuration, then run attune hook install --http again"
	if token == "" {
		return Check{Name: "http " + url, Detail: "the entry carries no " + TokenHeader + " header: hook serve answers it 401", Fix: "run attune hook install --http again"}
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
	req.Header.Set(TokenHeader, token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Check{Name: "http " + url, Detail: err.Error(), Fix: fix}
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusMethodNotAllowed: // alive, and the token taken
		return Check{Name: "http " + url, OK: true, Detail: "hook serve answers and takes the token"}
	case http.StatusUnauthorized:
		return Check{Name: "http " + url, Detail: "hook serve refuses the entry's token (another configuration's server?)", Fix: fix}
	}
	return Check{Name: "http " + url, Detail: fmt.Sprintf("answered %s", resp.Status), Fix: fix}
}

// oneLine joins the lines of a version's text.
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// commandArgv is the attune command an entry runs: the words of command,
// or of the script of a fail-closed wrapper (/bin/sh -c 'BIN hook ... ||
// { ...; exit 2; }', BIN hook ... || exit 2), up to its "||".
func commandArgv(command string) []string {
	argv := shellWords(command)
	if len(argv) >= 3 && argv[1] == "-c" && slices.Contains([]string{"sh", "bash", "zsh", "dash"}, filepath.Base(argv[0])) {
		argv = shellWords(argv[2])
	}
	if i := slices.Index(argv, "||"); i >= 0 {
		argv = argv[:i]
	}
	return argv
}

// shellWords splits a command as sh would for the quoting install writes
// ('...' with '\” inside, "...", backslashes).
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				cur.WriteByte(s[i])
			}
			in = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
