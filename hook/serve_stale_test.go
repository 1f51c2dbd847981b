package hook

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/attune-dev/attune/session"
)

// postEvent sends one event to `attune hook serve` and decodes the answer.
func postEvent(t *testing.T, url, token string, event any) map[string]any {
	t.Helper()
	in, _ := json.Marshal(event)
	resp, err := postWith(url, token, "application/json", in)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
		t.Fatalf("hook serve: %d %v", resp.StatusCode, err)
	}
	return m
}

// postWith POSTs body with the token and content type given.
func postWith(url, token, contentType string, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	if token != "" {
		req.Header.Set(TokenHeader, token)
	}
	return http.DefaultClient.Do(req)
}

// serveToken is the secret of the `hook serve` of the configuration cfg.
func serveToken(t testing.TB, cfg string) string {
	t.Helper()
	tok, err := LoadToken(filepath.Dir(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func contextOf(a map[string]any) string {
	hs, _ := a["hookSpecificOutput"].(map[string]any)
	s, _ := hs["additionalContext"].(string)
	return s
}

// A warm `hook serve` sees what a command hook process journaled for the
// same session in between: it brings the instance back when the journal
// moved, so the turn the other process ended is ended for it too, and the
// journal holds each turn once.
func TestServeSeesOtherProcesses(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "packs", "p"), 0o755)
	os.WriteFile(filepath.Join(dir, "packs", "p", "p.lua"), []byte(`hook.turn("start", function(b) notify("turn " .. b.turn) end)`), 0o644)
	cfgPath := filepath.Join(dir, "attune.toml")
	os.WriteFile(cfgPath, []byte("[engine]\npacks = [\"packs/p\"]\n"+mainBot), 0o644)
	url := "http://" + startServe(t, cfgPath) + HTTPPath
	tok := serveToken(t, cfgPath)
	if c := contextOf(postEvent(t, url, tok, map[string]any{"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "one"})); c != "turn 1" {
		t.Fatalf("prompt through serve: context %q", c)
	}
	// a command hook of the same session ends the turn
	runHook(t, cfgPath, map[string]any{"hook_event_name": "Stop", "session_id": "s", "last_assistant_message": "done"})
	// serve's next event comes without a turn: it opens turn 2
	a := postEvent(t, url, tok, map[string]any{"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash", "tool_use_id": "t1", "tool_input": map[string]any{"command": "ls"}})
	if c := contextOf(a); c != "turn 2" {
		t.Fatalf("serve after another process ended the turn: context %q, want the note of turn 2", c)
	}
	// serve keeps no reach: the command hook below takes the full path
	if _, err := os.Stat(reachFile(filepath.Join(dir, ".attune", "state.db.locks"), "claude/s")); !os.IsNotExist(err) {
		t.Fatalf("serve left a reach: %v", err)
	}
	runHook(t, cfgPath, map[string]any{"hook_event_name": "PostToolUse", "session_id": "s", "tool_name": "Bash", "tool_use_id": "t1", "tool_input": map[string]any{"command": "ls"}, "tool_response": map[string]any{}})
	postEvent(t, url, tok, map[string]any{"hook_event_name": "Stop", "session_id": "s", "last_assistant_message": "done"})
	entries := journalOf(t, cfgPath, "s")
	var turns []int
	var kinds []string
	for _, en := range entries {
		switch en.Type {
		case session.TurnBegin, session.TurnEnd, "tool-open", session.Tool:
			kinds = append(kinds, en.Type)
			if en.Type == session.TurnBegin {
				turns = append(turns, en.Turn)
			}
		}
	}
	want := []string{session.TurnBegin, session.TurnEnd, session.TurnBegin, "tool-open", session.Tool, session.TurnEnd}
	if len(turns) != 2 || turns[0] != 1 || turns[1] != 2 || len(kinds) != len(want) {
		t.Fatalf("journal: turns %v, entries %v; want %v", turns, kinds, want)
	}
	for k := range want {
		if kinds[k] != want[k] {
			t.Fatalf("journal: %v, want %v", kinds, want)
		}
	}
}
