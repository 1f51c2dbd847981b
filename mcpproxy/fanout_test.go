//go:build e2e

package mcpproxy_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/attune-dev/attune/internal/peertest"
)

// fixtureServer is testdata/upstream.mjs NAME: a server on the SDK's
// Server class whose answers name it.
func fixtureServer(t *testing.T, name string) string {
	return "node " + filepath.Join(peertest.Root(t), "mcpproxy", "testdata", "upstream.mjs") + " " + peers(t) + " " + name
}

// completion/complete goes to the upstream that lists the prompt or the
// resource template it names, also when the client did not list them
// first: two upstreams that both offer completions (a, b) and
// server-everything (ev). A resource no upstream lists goes to the
// upstream whose template it matches.
func TestCompletionRoutedToItsUpstream(t *testing.T) {
	dir := tmpDir(t)
	writeFile(t, filepath.Join(dir, "attune.toml"), "[engine]\nstore = \"memory:\"\n")
	p := plan{Command: attuneBin.Path(t), Args: []string{"mcp", "--config", filepath.Join(dir, "attune.toml"),
		"--upstream", "a=" + fixtureServer(t, "a"),
		"--upstream", "b=" + fixtureServer(t, "b"),
		"--upstream", "ev=node " + everythingServer(t)}}
	prompt := func(name, arg, value string) map[string]any {
		return map[string]any{"op": "complete", "ref": map[string]any{"type": "ref/prompt", "name": name}, "argument": map[string]any{"name": arg, "value": value}}
	}
	template := func(uri, arg, value string) map[string]any {
		return map[string]any{"op": "complete", "ref": map[string]any{"type": "ref/resource", "uri": uri}, "argument": map[string]any{"name": arg, "value": value}}
	}
	p.Steps = []map[string]any{
		prompt("b-prompt", "word", "x"), // before any list
		template("a://item/{id}", "id", "1"),
		prompt("completable-prompt", "department", "E"),
		template("demo://resource/dynamic/text/{resourceId}", "resourceId", "1"),
		{"op": "prompts"},
		prompt("a-prompt", "word", "y"),
		template("b://item/{id}", "id", "2"),
		{"op": "read", "uri": "demo://resource/dynamic/text/1"}, // listed by no one: ev's template
	}
	s := runClient(t, p)
	want := [][]string{
		{"b:b-prompt:x"},
		{"a:a://item/{id}:1"},
		{"Engineering"},
		nil, // server-everything's own answer, checked below
		nil,
		{"a:a-prompt:y"},
		{"b:b://item/{id}:2"},
	}
	for i, w := range want {
		if w == nil {
			continue
		}
		r := result[struct {
			Completion struct {
				Values []string `json:"values"`
			} `json:"completion"`
		}](t, s[i+1])
		if !reflect.DeepEqual(r.Completion.Values, w) {
			t.Errorf("step %d (%v): completion %v, want %v", i+1, p.Steps[i]["ref"], r.Completion.Values, w)
		}
	}
	if s[8].Error != "" || !strings.Contains(string(s[8].Result), "demo://resource/dynamic/text/1") {
		t.Errorf("read of a resource of ev's template: %s %s", clipS(s[8].Result), s[8].Error)
	}
	if s[4].Error != "" || !strings.Contains(string(s[4].Result), `"values"`) {
		t.Errorf("completion of server-everything's template: %s %s", s[4].Result, s[4].Error)
	}
}

// logging/setLevel reaches every upstream that offers logging (each one's
// SDK then drops the messages below the level), and the log notifications
// of each upstream reach the client. server-filesystem offers no logging:
// it is not asked.
func TestLoggingFansOut(t *testing.T) {
	dir := tmpDir(t)
	work := filepath.Join(dir, "work")
	writeFile(t, filepath.Join(work, "a.txt"), "a")
	writeFile(t, filepath.Join(dir, "attune.toml"), "[engine]\nstore = \"memory:\"\n")
	p := plan{Command: attuneBin.Path(t), Args: []string{"mcp", "--config", filepath.Join(dir, "attune.toml"),
		"--upstream", "fs=node " + fsServer(t) + " " + work,
		"--upstream", "a=" + fixtureServer(t, "a"),
		"--upstream", "b=" + fixtureServer(t, "b")}}
	p.Steps = []map[string]any{
		{"op": "call", "name": "a__log"},
		{"op": "call", "name": "b__log"},
		{"op": "logs"},
		{"op": "setLevel", "level": "warning"},
		{"op": "call", "name": "a__log"},
		{"op": "call", "name": "b__log"},
		{"op": "logs"},
		{"op": "call", "name": "fs__read_text_file", "arguments": map[string]any{"path": filepath.Join(work, "a.txt")}},
	}
	s := runClient(t, p)
	for _, i := range []int{1, 2, 5, 6} {
		if r := result[toolResult](t, s[i]); r.IsError || len(r.Content) != 1 || !strings.HasSuffix(r.Content[0].Text, " logged") {
			t.Errorf("step %d: %s", i, s[i].Result)
		}
	}
	logs := func(st step) []string {
		var r struct {
			Logs []struct {
				Level  string `json:"level"`
				Logger string `json:"logger"`
				Data   string `json:"data"`
			} `json:"logs"`
		}
		if err := json.Unmarshal(st.Result, &r); err != nil || st.Error != "" {
			t.Fatalf("logs: %s %s", st.Result, st.Error)
		}
		var out []string
		for _, l := range r.Logs {
			if l.Data != l.Logger+" "+l.Level {
				t.Errorf("log message %+v", l)
			}
			out = append(out, l.Data)
		}
		return out
	}
	all := []string{"a debug", "a info", "a warning", "a error", "b debug", "b info", "b warning", "b error"}
	if got := logs(s[3]); !reflect.DeepEqual(got, all) {
		t.Errorf("before setLevel: %q, want %q", got, all)
	}
	if s[4].Error != "" {
		t.Errorf("setLevel: %s", s[4].Error)
	}
	warn := []string{"a warning", "a error", "b warning", "b error"}
	if got := logs(s[7]); !reflect.DeepEqual(got, warn) {
		t.Errorf("after setLevel warning: %q, want %q (every upstream told)", got, warn)
	}
	if r := result[toolResult](t, s[8]); r.IsError || texts(r)[0] != "a" {
		t.Errorf("fs after setLevel: %s", s[8].Result)
	}
}

// An upstream's elicitation/create reaches the client, and the client's
// answer reaches the upstream: server-everything's
// trigger-elicitation-request answers as it does without the proxy, with
// one upstream and with several (where the proxy renames the request ids).
func TestElicitationPassesThrough(t *testing.T) {
	dir := tmpDir(t)
	writeFile(t, filepath.Join(dir, "attune.toml"), "[engine]\nstore = \"memory:\"\n")
	answers := map[string]map[string]any{
		"accept":  {"action": "accept", "content": map[string]any{"name": "Ada Lovelace", "check": true, "integer": 7}},
		"decline": {"action": "decline"},
	}
	for what, answer := range answers {
		t.Run(what, func(t *testing.T) {
			steps := func(tool string) []map[string]any {
				return []map[string]any{
					{"op": "wait", "ms": 300}, // the tool is registered once the client is initialized
					{"op": "call", "name": tool},
					{"op": "elicited"},
				}
			}
			direct := runClient(t, plan{Command: "node", Args: []string{everythingServer(t)}, Elicit: answer, Steps: steps("trigger-elicitation-request")})
			one := proxyPlan(t, filepath.Join(dir, "attune.toml"), nil, "node", everythingServer(t))
			one.Elicit, one.Steps = answer, steps("trigger-elicitation-request")
			several := plan{Command: attuneBin.Path(t), Args: []string{"mcp", "--config", filepath.Join(dir, "attune.toml"),
				"--upstream", "a=" + fixtureServer(t, "a"), "--upstream", "ev=node " + everythingServer(t)},
				Elicit: answer, Steps: steps("ev__trigger-elicitation-request")}
			for _, via := range [][]step{runClient(t, one), runClient(t, several)} {
				if via[2].Error != "" || !jsonEqual(via[2].Result, direct[2].Result) {
					t.Errorf("through the proxy: %s %s\nwant %s", clipS(via[2].Result), via[2].Error, clipS(direct[2].Result))
				}
				if !jsonEqual(via[3].Result, direct[3].Result) {
					t.Errorf("elicitation requests through the proxy %s\nwant %s", clipS(via[3].Result), clipS(direct[3].Result))
				}
			}
			r := result[toolResult](t, direct[2])
			if what == "accept" && !strings.Contains(strings.Join(texts(r), "\n"), "- Name: Ada Lovelace") {
				t.Errorf("direct: %q, want the client's answer", texts(r))
			}
		})
	}
}
