package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readSettings(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// install merges into the user's settings and uninstall removes only
// attune's entries.
func TestInstallUninstall(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	user := `{"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 check.py"}]}],
"Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]}}`
	os.WriteFile(path, []byte(user), 0o644)
	var orig map[string]any
	json.Unmarshal([]byte(user), &orig)
	in := Install{Binary: "/opt/my tools/attune", Config: "/p/attune.toml"}
	for range 2 { // installing twice leaves one set of entries
		if err := InstallClaude(path, in); err != nil {
			t.Fatal(err)
		}
	}
	m := readSettings(t, path)
	hooks := m["hooks"].(map[string]any)
	if m["model"] != "opus" || len(hooks) != len(claudeEvents)+1 {
		t.Fatalf("settings: %v", m)
	}
	pre := hooks["PreToolUse"].([]any)
	if len(pre) != 2 || !reflect.DeepEqual(pre[0], orig["hooks"].(map[string]any)["PreToolUse"].([]any)[0]) {
		t.Fatalf("PreToolUse: %v", pre)
	}
	ours := pre[1].(map[string]any)
	cmd := ours["hooks"].([]any)[0].(map[string]any)["command"]
	if ours["matcher"] != "*" || cmd != `'/opt/my tools/attune' hook claude --config /p/attune.toml` {
		t.Fatalf("our entry: %v", ours)
	}
	if stop := hooks["Stop"].([]any)[0].(map[string]any); stop["matcher"] != nil {
		t.Fatalf("Stop takes no matcher: %v", stop)
	}
	if err := UninstallClaude(path); err != nil {
		t.Fatal(err)
	}
	if got := readSettings(t, path); !reflect.DeepEqual(got, orig) {
		t.Fatalf("after uninstall: %v\nwant %v", got, orig)
	}
	// http entries
	if err := InstallClaude(path, Install{HTTP: "127.0.0.1:9999"}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"url": "http://127.0.0.1:9999/attune/hook/claude"`) {
		t.Fatalf("http: %s", data)
	}
	UninstallClaude(path)
	if got := readSettings(t, path); !reflect.DeepEqual(got, orig) {
		t.Fatalf("after uninstalling http: %v", got)
	}
	// a settings file that is not JSON is left alone
	os.WriteFile(path, []byte("{oops"), 0o644)
	if err := InstallClaude(path, in); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Fatalf("bad settings: %v", err)
	}
}

func TestCheckListen(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:80": true, "[::1]:80": true, "localhost:1": true, "0.0.0.0:80": false, "10.0.0.1:80": false, ":80": false, "nope": false} {
		if err := CheckListen(addr, false); (err == nil) != ok {
			t.Errorf("%s: %v", addr, err)
		}
	}
	if err := CheckListen("0.0.0.0:80", true); err != nil {
		t.Error(err)
	}
}

// On Windows the installed command names attune and its configuration with
// forward slashes, so a path without spaces is one unquoted word for bash,
// PowerShell and cmd.exe alike; elsewhere paths are left as they are.
func TestCommandPath(t *testing.T) {
	for _, c := range []struct {
		path    string
		windows bool
		want    string
	}{
		{`C:\Users\me\bin\attune.exe`, true, `C:/Users/me/bin/attune.exe`},
		{`C:\Program Files\attune\attune.exe`, true, `'C:/Program Files/attune/attune.exe'`},
		{`C:\Users\o'neil\attune.toml`, true, `'C:/Users/o'\''neil/attune.toml'`},
		{`/opt/attune/bin/attune`, false, `/opt/attune/bin/attune`},
		{`/opt/my tools/attune`, false, `'/opt/my tools/attune'`},
		{`/srv/odd\name/attune`, false, `'/srv/odd\name/attune'`}, // a backslash in a Unix name is a character
	} {
		if got := commandPath(c.path, c.windows); got != c.want {
			t.Errorf("commandPath(%q, windows %v) = %s, want %s", c.path, c.windows, got, c.want)
		}
	}
}

// A settings file that is a symbolic link (kept in a dotfiles folder) stays
// a link: install and uninstall edit the file it points to.
func TestInstallFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "settings.json")
	os.MkdirAll(filepath.Dir(target), 0o755)
	os.WriteFile(target, []byte(`{"model": "opus"}`), 0o644)
	path := filepath.Join(dir, "p", ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.Symlink(filepath.Join("..", "..", "dotfiles", "settings.json"), path); err != nil {
		t.Fatal(err)
	}
	if err := InstallClaude(path, Install{Binary: "/bin/attune", Config: "/p/attune.toml"}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(path); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if m := readSettings(t, target); m["model"] != "opus" || m["hooks"] == nil {
		t.Fatalf("the target: %v", m)
	}
	if err := UninstallClaude(path); err != nil {
		t.Fatal(err)
	}
	if m := readSettings(t, target); m["hooks"] != nil {
		t.Fatalf("after uninstall: %v", m)
	}
}
