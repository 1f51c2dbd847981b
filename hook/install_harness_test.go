package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// decodeNumbers reads JSON keeping numbers as written.
func decodeNumbers(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return v
}

func readJSONFile(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := decodeNumbers(t, data).(map[string]any)
	if !ok {
		t.Fatalf("%s: not an object", path)
	}
	return m
}

// handlers returns attune's handlers of an event in a hook file (groups
// unwrapped).
func ourHandlers(t *testing.T, m map[string]any, dialect, ev string, flat bool) []map[string]any {
	t.Helper()
	hooks, _ := m["hooks"].(map[string]any)
	list, _ := hooks[ev].([]any)
	var out []map[string]any
	for _, e := range list {
		if flat {
			if isOurs(e, dialect) {
				out = append(out, e.(map[string]any))
			}
			continue
		}
		g, _ := e.(map[string]any)
		hs, _ := g["hooks"].([]any)
		for _, h := range hs {
			if isOurs(h, dialect) {
				hm := h.(map[string]any)
				if mt, ok := g["matcher"]; ok {
					hm = cloneMap(hm)
					hm["(matcher)"] = mt
				}
				out = append(out, hm)
			}
		}
	}
	return out
}

func cloneMap(m map[string]any) map[string]any {
	c := map[string]any{}
	for k, v := range m {
		c[k] = v
	}
	return c
}

var testInstall = Install{Binary: "/opt/attune/bin/attune", Config: "/p/attune.toml"}

// An install edits the settings file in place: its mode stays (0600 is
// not widened), and every value attune does not own stays as written,
// byte for byte: a number past float64's precision, a decimal's spelling,
// the keys' order and the layout of everything outside "hooks".
func TestInstallKeepsModeAndValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	head := "{\n    \"zeta\": 12345678901234567890,\n    \"alpha\": {\"ratio\": 1.50, \"exp\": 1e400},\n"
	user := head + "    \"hooks\": {\"Notification\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send hi\", \"timeout\": 7.0}]}]}\n}\n"
	if err := os.WriteFile(path, []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o600)
	if err := InstallClaude(path, testInstall); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !bytes.HasPrefix(data, []byte(head)) {
		t.Fatalf("the values before hooks changed:\n%s", data)
	}
	for _, w := range []string{`"notify-send hi", "timeout": 7.0`, `12345678901234567890`, `1.50`, `1e400`} {
		if !bytes.Contains(data, []byte(w)) {
			t.Errorf("%s lost:\n%s", w, data)
		}
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	if err := UninstallClaude(path); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(path)
	if !reflect.DeepEqual(decodeNumbers(t, data), decodeNumbers(t, []byte(user))) || !bytes.HasPrefix(data, []byte(head)) {
		t.Fatalf("after uninstall:\n%s\nwant\n%s", data, user)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode after uninstall %v, want 0600", st.Mode().Perm())
	}
	// no temporary file is left beside it
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("files left: %v", ents)
	}
}

// A settings file install cannot parse, or whose shape it does not expect,
// is refused with the file named and what is wrong, and nothing changes
// (a "null" file used to panic).
func TestInstallRefusesBadFiles(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"null", "is null, not a JSON object"},
		{"[]", "is a list, not a JSON object"},
		{`"x"`, "is a string, not a JSON object"},
		{"{oops", "not JSON"},
		{`{"a": 1} {"b": 2}`, "not JSON"},
		{"\xef\xbb\xbf{}", "byte order mark"},
		{`{"hooks": "everything"}`, `"hooks" is a string, not an object`},
		{`{"hooks": null}`, `"hooks" is null, not an object`},
		{`{"hooks": {"PreToolUse": {"matcher": "*"}}}`, `"hooks.PreToolUse" is an object, not a list`},
		{`{"hooks": {}, "hooks": {}}`, `"hooks" twice`},
	} {
		for _, harness := range []string{"claude", "gemini", "codex"} {
			body, want := c.body, c.want
			if harness == "gemini" { // Gemini CLI's name for the event
				body, want = strings.ReplaceAll(body, "PreToolUse", "BeforeTool"), strings.ReplaceAll(want, "PreToolUse", "BeforeTool")
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "settings.json")
			os.WriteFile(path, []byte(body), 0o640)
			os.Chmod(path, 0o640)
			_, err := InstallHooks(harness, path, testInstall, Where{Home: dir, Getenv: func(string) string { return "" }})
			if err == nil || !errors.Is(err, ErrHookFile) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
				t.Errorf("%s %q: %v, want %q naming the file", harness, body, err, want)
			}
			if data, _ := os.ReadFile(path); string(data) != body {
				t.Errorf("%s %q: the file changed to %q", harness, body, data)
			}
			if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
				t.Errorf("%s %q: mode %v", harness, c.body, st.Mode().Perm())
			}
			if _, err := os.Stat(filepath.Join(dir, ".codex", "config.toml")); err == nil {
				t.Errorf("%s %q: config.toml written", harness, c.body)
			}
		}
	}
	// a syntax error says where
	path := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(path, []byte("{\n  \"a\": 1,\n  oops\n}"), 0o644)
	if err := InstallClaude(path, testInstall); err == nil || !strings.Contains(err.Error(), path+":3:") {
		t.Errorf("syntax error: %v", err)
	}
}

// Claude Code's PreToolUse entry carries onFailure "block" (Claude Code
// 2.1.328: a hook that cannot start, times out or exits with another code
// than 0 or 2 counts as exit 2, blocking the call), and every entry a
// timeout in seconds beyond attune's own answer deadline; an http entry
// carries the secret of hook serve it is given as X-Attune-Token.
func TestInstallClaudeFailsClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude", "settings.json")
	if err := InstallClaude(path, testInstall); err != nil {
		t.Fatal(err)
	}
	m := readJSONFile(t, path)
	for _, ev := range claudeEvents {
		hs := ourHandlers(t, m, "claude", ev, false)
		if len(hs) != 1 {
			t.Fatalf("%s: %v", ev, hs)
		}
		h := hs[0]
		if h["timeout"] != json.Number("35") || h["type"] != "command" {
			t.Errorf("%s: %v", ev, h)
		}
		// only a tool call is blocked: a blocked prompt would keep the
		// failure from the model, and lose every prompt
		if want := ev == "PreToolUse"; (h["onFailure"] == "block") != want {
			t.Errorf("%s: onFailure %v", ev, h["onFailure"])
		}
		if h["command"] != "/opt/attune/bin/attune hook claude --config /p/attune.toml" {
			t.Errorf("%s: command %v", ev, h["command"])
		}
	}
	for _, ev := range []string{"SessionStart", "SessionEnd"} { // the session boundary
		if len(ourHandlers(t, m, "claude", ev, false)) != 1 {
			t.Errorf("no %s entry", ev)
		}
	}
	if err := InstallClaude(path, Install{HTTP: "127.0.0.1:8787", Token: "0123456789abcdef0123456789abcdef"}); err != nil {
		t.Fatal(err)
	}
	m = readJSONFile(t, path)
	hs := ourHandlers(t, m, "claude", "PreToolUse", false)
	if len(hs) != 1 || hs[0]["type"] != "http" || hs[0]["onFailure"] != "block" || hs[0]["url"] != "http://127.0.0.1:8787"+HTTPPath ||
		!reflect.DeepEqual(hs[0]["headers"], map[string]any{"X-Attune-Token": "0123456789abcdef0123456789abcdef"}) {
		t.Fatalf("http entry: %v", hs)
	}
}

// Gemini CLI reads hook timeouts as milliseconds: attune's entries say
// 35000 (a timeout written as seconds killed attune after 35 ms and let the
// call run). BeforeTool runs the fail-closed command; the others do not (a
// denied BeforeAgent drops the prompt, a denied AfterAgent makes Gemini go
// on).
func TestInstallGeminiMilliseconds(t *testing.T) {
	home := t.TempDir()
	path, err := HookFile("gemini", ScopeUser, Where{Home: home})
	if err != nil || path != filepath.Join(home, ".gemini", "settings.json") {
		t.Fatalf("%s, %v", path, err)
	}
	if _, err := InstallHooks("gemini", path, testInstall, Where{Home: home}); err != nil {
		t.Fatal(err)
	}
	m := readJSONFile(t, path)
	for _, ev := range []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "PreCompress", "SessionEnd"} {
		hs := ourHandlers(t, m, "gemini", ev, false)
		if len(hs) != 1 || hs[0]["timeout"] != json.Number("35000") {
			t.Fatalf("%s: %v", ev, hs)
		}
		cmd := hs[0]["command"].(string)
		guarded := strings.Contains(cmd, "exit 2")
		if want := ev == "BeforeTool"; guarded != want && runtime.GOOS != "windows" {
			t.Errorf("%s: fail-closed %v, want %v: %s", ev, guarded, want, cmd)
		}
		if (ev == "BeforeTool" || ev == "AfterTool") != (hs[0]["(matcher)"] == "*") {
			t.Errorf("%s: matcher %v", ev, hs[0]["(matcher)"])
		}
	}
}

// The fail-closed command keeps attune's answer (a deny printed with exit
// 0 stays exit 0) and turns only a missing binary, a crash or a signal
// into exit 2 with a reason on stderr, the blocking code of Codex, Gemini
// CLI, Copilot CLI and Cursor.
func TestFailClosedCommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		if got := failClosedCommand(&Install{Binary: `C:\bin\attune.exe`}, "codex", true); got != "C:/bin/attune.exe hook codex || exit 2" {
			t.Fatal(got)
		}
		return
	}
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755)
		return p
	}
	for _, c := range []struct {
		bin      string
		code     int
		out, err string
	}{
		{script("deny", `cat >/dev/null; echo '{"decision":"block","reason":"no"}'; exit 0`), 0, `{"decision":"block","reason":"no"}`, ""},
		{filepath.Join(dir, "gone"), 2, "", "attune hook codex failed (exit 127)"},
		{script("crash", "exit 3"), 2, "", "failed (exit 3)"},
		{script("killed", "kill -9 $$"), 2, "", "failed (exit 137)"},
	} {
		cmd := exec.Command("/bin/sh", "-c", failClosedCommand(&Install{Binary: c.bin, Config: "/p/a b.toml"}, "codex", false))
		cmd.Stdin = strings.NewReader(`{"hook_event_name":"PreToolUse"}`)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		if code != c.code || !strings.Contains(out.String(), c.out) || !strings.Contains(errb.String(), c.err) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", filepath.Base(c.bin), code, out.String(), errb.String())
		}
	}
}

// Codex's trusted_hash is what Codex 0.169 computes (these hashes are
// codex app-server's hooks/list currentHash for the same entries).
func TestCodexHookHash(t *testing.T) {
	star := "*"
	if got := codexHookHash("PreToolUse", &star, "'/opt/attune' hook codex || exit 2", 35, false); got != "sha256:5790d322b8a51e0e6bf17821740f601723501ee468fd63d9b307fcd15eb019ab" {
		t.Errorf("PreToolUse: %s", got)
	}
	if got := codexHookHash("Stop", nil, "/opt/attune hook codex", 0, false); got != "sha256:417744621f48e2331086393d96f22950914fd981e258777531bbbe8b94af4f84" {
		t.Errorf("Stop: %s", got)
	}
	if codexEventLabel("UserPromptSubmit") != "user_prompt_submit" || codexEventLabel("PreToolUse") != "pre_tool_use" {
		t.Error(codexEventLabel("UserPromptSubmit"))
	}
}

func codexState(t *testing.T, path string) map[string]string {
	t.Helper()
	var c struct {
		Hooks struct {
			State map[string]struct {
				TrustedHash string `toml:"trusted_hash"`
			} `toml:"state"`
		} `toml:"hooks"`
	}
	if _, err := toml.DecodeFile(path, &c); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range c.Hooks.State {
		out[k] = v.TrustedHash
	}
	return out
}

// install codex writes hooks.json and trusts each of attune's entries in
// $CODEX_HOME/config.toml ([hooks.state."FILE:EVENT:GROUP:HANDLER"]
// trusted_hash), keeping the rest of config.toml; uninstall removes both,
// and a user's handler that moves up when attune's group leaves keeps its
// trust under its new key.
func TestInstallCodexTrust(t *testing.T) {
	home := t.TempDir()
	codexHome := filepath.Join(home, "codex-home")
	env := func(k string) string {
		if k == "CODEX_HOME" {
			return codexHome
		}
		return ""
	}
	w := Where{Home: home, Project: filepath.Join(home, "proj"), Getenv: env}
	path, err := HookFile("codex", ScopeUser, w)
	if err != nil || path != filepath.Join(codexHome, "hooks.json") {
		t.Fatalf("%s %v", path, err)
	}
	if p, _ := HookFile("codex", ScopeProject, w); p != filepath.Join(home, "proj", ".codex", "hooks.json") {
		t.Fatalf("project: %s", p)
	}
	os.MkdirAll(codexHome, 0o700)
	cfgPath := filepath.Join(codexHome, "config.toml")
	cfg := "model = \"gpt-5.5\" # mine\n\n[projects.\"/p\"]\ntrust_level = \"trusted\"\n"
	os.WriteFile(cfgPath, []byte(cfg), 0o600)
	os.Chmod(cfgPath, 0o600)
	res, err := InstallHooks("codex", path, testInstall, w)
	if err != nil {
		t.Fatal(err)
	}
	if res.Trust != cfgPath {
		t.Fatalf("trust: %+v", res)
	}
	m := readJSONFile(t, path)
	state := codexState(t, cfgPath)
	if len(state) != 6 {
		t.Fatalf("state: %v", state)
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "Stop"} {
		hs := ourHandlers(t, m, "codex", ev, false)
		if len(hs) != 1 || hs[0]["timeout"] != json.Number("35") {
			t.Fatalf("%s: %v", ev, hs)
		}
		var matcher *string
		if mt, ok := hs[0]["(matcher)"].(string); ok {
			matcher = &mt
		}
		key := path + ":" + codexEventLabel(ev) + ":0:0"
		if want := codexHookHash(ev, matcher, hs[0]["command"].(string), 35, false); state[key] != want {
			t.Errorf("%s: trusted %q, want %q", key, state[key], want)
		}
	}
	data, _ := os.ReadFile(cfgPath)
	if !strings.HasPrefix(string(data), cfg) {
		t.Errorf("config.toml lost its own lines:\n%s", data)
	}
	if st, _ := os.Stat(cfgPath); st.Mode().Perm() != 0o600 {
		t.Errorf("config.toml mode %v", st.Mode().Perm())
	}
	// installing again changes nothing
	before, _ := os.ReadFile(path)
	if res, err := InstallHooks("codex", path, testInstall, w); err != nil || !res.Unchanged || res.Trust != "" {
		t.Fatalf("again: %+v %v", res, err)
	}
	if again, _ := os.ReadFile(cfgPath); !bytes.Equal(again, data) {
		t.Errorf("config.toml changed on a second install:\n%s", again)
	}
	// a user's hook after attune's, trusted by the user
	var doc map[string]any
	json.Unmarshal(before, &doc)
	pre := doc["hooks"].(map[string]any)["PreToolUse"].([]any)
	doc["hooks"].(map[string]any)["PreToolUse"] = append(pre, map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": "echo mine"}}})
	edited, _ := json.MarshalIndent(doc, "", "  ")
	os.WriteFile(path, edited, 0o644)
	userKey := path + ":pre_tool_use:1:0"
	f, _ := os.OpenFile(cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n[hooks.state." + tomlString(userKey) + "]\ntrusted_hash = \"sha256:mine\"\nenabled = true\n")
	f.Close()
	res, err = UninstallHooks("codex", path, w)
	if err != nil || res.Trust != cfgPath {
		t.Fatalf("uninstall: %+v %v", res, err)
	}
	state = codexState(t, cfgPath)
	if len(state) != 1 || state[path+":pre_tool_use:0:0"] != "sha256:mine" {
		t.Fatalf("after uninstall: %v", state)
	}
	m = readJSONFile(t, path)
	if len(m["hooks"].(map[string]any)) != 1 {
		t.Fatalf("hooks.json after uninstall: %v", m)
	}
	data, _ = os.ReadFile(cfgPath)
	if !strings.HasPrefix(string(data), cfg) || !strings.Contains(string(data), "enabled = true") {
		t.Errorf("config.toml after uninstall:\n%s", data)
	}
	// a config.toml that is not TOML is refused before hooks.json is touched
	os.WriteFile(cfgPath, []byte("model = \n"), 0o600)
	hooksBefore, _ := os.ReadFile(path)
	if _, err := InstallHooks("codex", path, testInstall, w); err == nil || !strings.Contains(err.Error(), "config.toml") {
		t.Fatalf("bad config.toml: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, hooksBefore) {
		t.Error("hooks.json changed though config.toml was refused")
	}
}

// uninstall removes attune's entries and only them, for every harness: the
// user's entries, in the same events and in others, and the file's other
// settings are what they were.
func TestUninstallOnlyOurs(t *testing.T) {
	files := map[string]string{
		"claude":  `{"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 check.py"}, {"type": "command", "command": "/usr/bin/attune-notes hook claude-log"}]}], "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]}}`,
		"codex":   `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 12345678901234567890}]}]}}`,
		"gemini":  `{"general": {"vimMode": true}, "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./g.sh", "timeout": 5000}]}]}}`,
		"copilot": `{"version": 1, "hooks": {"PreToolUse": [{"type": "command", "bash": "./c.sh", "timeoutSec": 10}]}}`,
		"cursor":  `{"version": 1, "hooks": {"beforeShellExecution": [{"command": "./cursor.sh"}], "afterFileEdit": [{"command": "prettier"}]}}`,
	}
	for harness, body := range files {
		root := t.TempDir()
		w := Where{Project: root, Home: root, Getenv: func(k string) string {
			if k == "CODEX_HOME" {
				return filepath.Join(root, ".codex-home")
			}
			return ""
		}}
		path, err := HookFile(harness, ScopeProject, w)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, []byte(body), 0o644)
		spec, _ := harnessSpecs(harness)
		res, err := InstallHooks(harness, path, testInstall, w)
		if err != nil {
			t.Fatalf("%s: %v", harness, err)
		}
		m := readJSONFile(t, path)
		for _, ev := range spec.events {
			if n := len(ourHandlers(t, m, harness, ev, spec.flat)); n != 1 {
				t.Errorf("%s %s: %d entries of attune's", harness, ev, n)
			}
		}
		if spec.version && m["version"] != json.Number("1") {
			t.Errorf("%s: version %v", harness, m["version"])
		}
		if len(res.Events) != len(spec.events) {
			t.Errorf("%s: events %v", harness, res.Events)
		}
		if _, err := UninstallHooks(harness, path, w); err != nil {
			t.Fatalf("%s uninstall: %v", harness, err)
		}
		data, _ := os.ReadFile(path)
		if !reflect.DeepEqual(decodeNumbers(t, data), decodeNumbers(t, []byte(body))) {
			t.Errorf("%s after uninstall:\n%s\nwant\n%s", harness, data, body)
		}
	}
}

// Copilot CLI reads .github/hooks/*.json: attune writes its own
// attune.json ({"version": 1, ...}, timeoutSec in seconds, the command
// under "bash"), and uninstall removes the file when nothing else is in it.
// Cursor's hooks.json entries on the events before a call say failClosed.
func TestInstallCopilotAndCursor(t *testing.T) {
	root := t.TempDir()
	w := Where{Project: root, Home: filepath.Join(root, "home")}
	path, _ := HookFile("copilot", ScopeProject, w)
	if path != filepath.Join(root, ".github", "hooks", "attune.json") {
		t.Fatal(path)
	}
	if _, err := InstallHooks("copilot", path, testInstall, w); err != nil {
		t.Fatal(err)
	}
	m := readJSONFile(t, path)
	hs := ourHandlers(t, m, "copilot", "PreToolUse", true)
	if len(hs) != 1 || hs[0]["timeoutSec"] != json.Number("35") || hs[0]["type"] != "command" {
		t.Fatalf("copilot: %v", m)
	}
	if runtime.GOOS != "windows" && !strings.Contains(hs[0]["bash"].(string), "exit 2") {
		t.Errorf("copilot preToolUse is not fail-closed: %v", hs[0])
	}
	if _, err := UninstallHooks("copilot", path, w); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("attune.json left: %v", err)
	}
	if p, _ := HookFile("copilot", ScopeUser, Where{Home: "/h", Getenv: func(k string) string {
		if k == "COPILOT_HOME" {
			return "/ch"
		}
		return ""
	}}); p != filepath.Join("/ch", "hooks", "attune.json") {
		t.Errorf("copilot user: %s", p)
	}
	cpath, _ := HookFile("cursor", ScopeUser, w)
	if cpath != filepath.Join(root, "home", ".cursor", "hooks.json") {
		t.Fatal(cpath)
	}
	if _, err := InstallHooks("cursor", cpath, testInstall, w); err != nil {
		t.Fatal(err)
	}
	m = readJSONFile(t, cpath)
	for ev, closed := range map[string]bool{"beforeShellExecution": true, "preToolUse": true, "beforeSubmitPrompt": false, "afterFileEdit": false, "stop": false} {
		hs := ourHandlers(t, m, "cursor", ev, true)
		if len(hs) != 1 || (hs[0]["failClosed"] == true) != closed || hs[0]["timeout"] != json.Number("35") {
			t.Errorf("cursor %s: %v", ev, hs)
		}
	}
}

// --user installs into each harness's own user configuration, --local
// (Claude Code only) into .claude/settings.local.json.
func TestHookFilePaths(t *testing.T) {
	w := Where{Project: "/p", Home: "/h", Getenv: func(string) string { return "" }}
	for _, c := range []struct {
		harness string
		scope   Scope
		want    string
	}{
		{"claude", ScopeProject, "/p/.claude/settings.json"},
		{"claude", ScopeLocal, "/p/.claude/settings.local.json"},
		{"claude", ScopeUser, "/h/.claude/settings.json"},
		{"codex", ScopeUser, "/h/.codex/hooks.json"},
		{"codex", ScopeProject, "/p/.codex/hooks.json"},
		{"gemini", ScopeProject, "/p/.gemini/settings.json"},
		{"gemini", ScopeUser, "/h/.gemini/settings.json"},
		{"copilot", ScopeProject, "/p/.github/hooks/attune.json"},
		{"copilot", ScopeUser, "/h/.copilot/hooks/attune.json"},
		{"cursor", ScopeProject, "/p/.cursor/hooks.json"},
		{"cursor", ScopeUser, "/h/.cursor/hooks.json"},
	} {
		got, err := HookFile(c.harness, c.scope, w)
		if err != nil || got != filepath.FromSlash(c.want) {
			t.Errorf("%s %d: %s %v, want %s", c.harness, c.scope, got, err, c.want)
		}
	}
	if p, _ := HookFile("gemini", ScopeUser, Where{Home: "/h", Getenv: func(k string) string {
		if k == "GEMINI_CLI_HOME" {
			return "/g"
		}
		return ""
	}}); p != filepath.FromSlash("/g/.gemini/settings.json") {
		t.Errorf("gemini with GEMINI_CLI_HOME: %s", p)
	}
	if p, _ := HookFile("claude", ScopeUser, Where{Home: "/h", Getenv: func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return "/cc"
		}
		return ""
	}}); p != filepath.FromSlash("/cc/settings.json") {
		t.Errorf("claude with CLAUDE_CONFIG_DIR: %s", p)
	}
	if _, err := HookFile("codex", ScopeLocal, w); err == nil {
		t.Error("codex --local accepted")
	}
	if _, err := HookFile("vim", ScopeProject, w); err == nil {
		t.Error("an unknown harness accepted")
	}
}

// A binary that will not outlive the install is refused, with how to build
// one: go run's build (a go-build folder, Go's build cache) and anything
// in a temporary folder.
func TestCheckBinary(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "gocache")
	t.Setenv("GOCACHE", cache)
	for _, bin := range []string{
		"/tmp/go-build2845938837/b001/exe/attune",
		`C:\Users\u\AppData\Local\Temp\go-build123\b001\exe\attune.exe`,
		filepath.Join(os.TempDir(), "attune"),
		filepath.Join(cache, "1a", "attune"),
	} {
		err := CheckBinary(bin)
		if err == nil || !strings.Contains(err.Error(), "go install github.com/attune-dev/attune/cmd/attune@latest") || !strings.Contains(err.Error(), "go build -o") {
			t.Errorf("%s: %v", bin, err)
		}
	}
	if runtime.GOOS != "windows" {
		if err := CheckBinary("/tmp/attune"); err == nil {
			t.Error("/tmp accepted")
		}
	}
	if err := CheckBinary(filepath.FromSlash("/srv/gocache/ab/attune"), filepath.FromSlash("/srv/gocache")); err == nil || !strings.Contains(err.Error(), "build cache") {
		t.Errorf("a binary in go env GOCACHE: %v", err)
	}
	if err := CheckBinary(filepath.FromSlash("/usr/local/bin/attune")); err != nil {
		t.Errorf("an installed binary: %v", err)
	}
	if _, err := InstallHooks("gemini", filepath.Join(t.TempDir(), "s.json"), Install{Binary: filepath.Join(os.TempDir(), "go-build1", "exe", "attune")}, Where{}); err == nil {
		t.Error("InstallHooks took a go run binary")
	}
	// entries are known by attune in their command: a binary named
	// otherwise could not be uninstalled
	if _, err := InstallHooks("gemini", filepath.Join(t.TempDir(), "s.json"), Install{Binary: filepath.FromSlash("/usr/local/bin/guard")}, Where{}); err == nil || !strings.Contains(err.Error(), "attune in its path") {
		t.Errorf("a binary without attune in its name: %v", err)
	}
}

// Codex names a hooks.json by its folder's real path when CODEX_HOME is a
// link, and by the working folder as given for a project: install trusts
// both spellings when they differ, and uninstall removes both.
func TestInstallCodexTrustThroughLink(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	os.MkdirAll(real, 0o700)
	link := filepath.Join(root, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	w := Where{Home: root, Getenv: func(k string) string {
		if k == "CODEX_HOME" {
			return link
		}
		return ""
	}}
	path, _ := HookFile("codex", ScopeUser, w)
	if _, err := InstallHooks("codex", path, testInstall, w); err != nil {
		t.Fatal(err)
	}
	realDir, _ := filepath.EvalSymlinks(real)
	state := codexState(t, filepath.Join(real, "config.toml"))
	for _, file := range []string{filepath.Join(link, "hooks.json"), filepath.Join(realDir, "hooks.json")} {
		if state[file+":pre_tool_use:0:0"] == "" || state[file+":stop:0:0"] == "" {
			t.Errorf("no trust for %s: %v", file, state)
		}
	}
	if _, err := UninstallHooks("codex", path, w); err != nil {
		t.Fatal(err)
	}
	if state := codexState(t, filepath.Join(real, "config.toml")); len(state) != 0 {
		t.Errorf("left after uninstall: %v", state)
	}
}

// On Windows Copilot CLI runs an entry's "powershell": the path is called
// with & (a quoted path is a string to PowerShell), and on preToolUse any
// exit but 0 becomes 2; `||` is not PowerShell 5's.
func TestPowershellCommand(t *testing.T) {
	in := &Install{Binary: `C:\Program Files\attune\attune.exe`, Config: `C:\p\o'k\attune.toml`}
	if got, want := powershellCommand(in, "copilot", true), `& 'C:/Program Files/attune/attune.exe' hook copilot --config 'C:/p/o''k/attune.toml'; if ($LASTEXITCODE -ne 0) { exit 2 }`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := powershellCommand(in, "copilot", false); strings.Contains(got, "exit 2") {
		t.Error(got)
	}
}

// Values of a shape attune does not expect inside an event's list (a
// string, a number, a group whose hooks is no list) are the user's: they
// stay through install and uninstall.
func TestInstallKeepsOddUserValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	body := `{"hooks": {"PreToolUse": ["weird", 42, {"hooks": "x"}, {"matcher": "Bash"}], "Custom": "not a list"}}`
	os.WriteFile(path, []byte(body), 0o644)
	if err := InstallClaude(path, testInstall); err != nil {
		t.Fatal(err)
	}
	m := readJSONFile(t, path)
	pre := m["hooks"].(map[string]any)["PreToolUse"].([]any)
	if len(pre) != 5 || pre[0] != "weird" || pre[1] != json.Number("42") || m["hooks"].(map[string]any)["Custom"] != "not a list" {
		t.Fatalf("after install: %v", m)
	}
	if err := UninstallClaude(path); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !reflect.DeepEqual(decodeNumbers(t, data), decodeNumbers(t, []byte(body))) {
		t.Fatalf("after uninstall: %s", data)
	}
}

// A config.toml that keeps hook trust where attune cannot add tables (an
// inline hooks.state) is refused, naming it, and neither file changes.
func TestInstallCodexRefusesInlineState(t *testing.T) {
	home := t.TempDir()
	w := Where{Home: home, Getenv: func(string) string { return "" }}
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	cfgPath := filepath.Join(home, ".codex", "config.toml")
	cfg := "[hooks]\nstate = { \"x\" = { trusted_hash = \"sha256:1\" } }\n"
	os.WriteFile(cfgPath, []byte(cfg), 0o600)
	path, _ := HookFile("codex", ScopeUser, w)
	_, err := InstallHooks("codex", path, testInstall, w)
	if err == nil || !strings.Contains(err.Error(), cfgPath) || !strings.Contains(err.Error(), "/hooks") {
		t.Fatalf("inline state: %v", err)
	}
	if data, _ := os.ReadFile(cfgPath); string(data) != cfg {
		t.Errorf("config.toml changed: %s", data)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("hooks.json written")
	}
}

// Whatever a settings file holds, install never panics: it refuses the
// file (ErrHookFile) or writes valid JSON with every other member as it
// was, and uninstall then gives back the same values.
func FuzzInstallEdit(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`, `{"hooks": {}}`, "{\r\n\t\"a\": \"}\\\"{\",\r\n\t\"hooks\": {\"PreToolUse\": []}\r\n}",
		`{"hooks": {"PreToolUse": [{"hooks": [{"command": "x attune hook claude"}]}]}, "n": 1e999}`,
		`{"a": [1, [2, {"b": "\u00e9"}]], "hooks": {"Stop": [{"hooks": []}]}}`, `{"hooks": []}`, ` `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		spec, _ := harnessSpecs("claude")
		fe, err := spec.editHookFile("settings.json", body, func(ev string) []byte { return spec.entry(&testInstall, ev) })
		if err != nil {
			if !errors.Is(err, ErrHookFile) {
				t.Fatalf("%q: %v", body, err)
			}
			return
		}
		if !json.Valid(fe.out) {
			t.Fatalf("%q gave invalid JSON %q", body, fe.out)
		}
		un, err := spec.editHookFile("settings.json", fe.out, nil)
		if err != nil {
			t.Fatalf("uninstall of %q: %v", fe.out, err)
		}
		if len(bytes.TrimSpace(body)) == 0 {
			return
		}
		want, got := decodeNumbers(t, body).(map[string]any), decodeNumbers(t, un.out).(map[string]any)
		// an empty "hooks" attune filled is removed with its entries
		if h, ok := want["hooks"].(map[string]any); ok && len(h) == 0 {
			if _, ok := got["hooks"]; !ok {
				delete(want, "hooks")
			}
		}
		if h, ok := want["hooks"].(map[string]any); ok {
			gh, _ := got["hooks"].(map[string]any)
			for ev, v := range h { // an event list emptied of attune's entries goes
				if l, ok := v.([]any); ok {
					if _, kept := gh[ev]; !kept && (len(l) == 0 || allOurs(l)) {
						delete(h, ev)
					}
				}
			}
			if len(h) == 0 {
				if _, ok := got["hooks"]; !ok {
					delete(want, "hooks")
				}
			}
		}
		if !reflect.DeepEqual(stripOurs(want), stripOurs(got)) {
			t.Fatalf("%q: install then uninstall gave %q", body, un.out)
		}
	})
}

func allOurs(groups []any) bool {
	for _, g := range groups {
		gm, ok := g.(map[string]any)
		if !ok {
			return false
		}
		hs, ok := gm["hooks"].([]any)
		if !ok {
			return false
		}
		for _, h := range hs {
			if !isOurs(h, "claude") {
				return false
			}
		}
	}
	return true
}

// stripOurs drops attune's handlers from decoded settings (the fuzzer
// may write some of its own), for comparing.
func stripOurs(m map[string]any) map[string]any {
	h, ok := m["hooks"].(map[string]any)
	if !ok {
		return m
	}
	for ev, v := range h {
		l, ok := v.([]any)
		if !ok {
			continue
		}
		var keep []any
		for _, g := range l {
			gm, ok := g.(map[string]any)
			if hs, ok2 := gm["hooks"].([]any); ok && ok2 {
				var left []any
				for _, x := range hs {
					if !isOurs(x, "claude") {
						left = append(left, x)
					}
				}
				if len(left) == 0 && len(hs) > 0 {
					continue
				}
				gm = cloneMap(gm)
				gm["hooks"] = left
				keep = append(keep, gm)
				continue
			}
			keep = append(keep, g)
		}
		h[ev] = keep
	}
	return m
}
