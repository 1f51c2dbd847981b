//go:build e2e

package mcpproxy_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/mcpproxy"
	"github.com/attune-dev/attune/store"
)

// A connection's calls are journaled in its instance's session: after the
// client leaves, the session replays without the upstream and without
// diverging (R3.10).
func TestConnectionReplays(t *testing.T) {
	dir := tmpDir(t)
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(filepath.Join(work, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(exampleConfig(t, dir, filepath.Join(work, "src"), "memory:"))
	if err != nil {
		t.Fatal(err)
	}
	st := store.NewMemory()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	// the peer first: a test failed inside the goroutine below would wait for ever
	server := fsServer(t)
	served := make(chan error, 1)
	go func() {
		served <- mcpproxy.Serve(context.Background(), mcpproxy.Options{
			Config: cfg, Store: st, ID: "mcp-replay", In: inR, Out: outW,
			Upstreams: []mcpproxy.Upstream{{Name: "fs", Command: []string{"node", server, work}}},
		})
		outW.Close()
	}()
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "attune-replay", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := []map[string]any{
		{"path": filepath.Join(work, "src", "a.txt"), "content": "a"},
		{"path": filepath.Join(work, "outside.txt"), "content": "b"},
	}
	var texts []string
	for _, args := range calls {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Content {
			texts = append(texts, c.(*mcp.TextContent).Text)
		}
	}
	if len(texts) != 3 || !strings.Contains(texts[1], "write 1") || !strings.HasPrefix(texts[2], "refused by guard") {
		t.Fatalf("calls: %q", texts)
	}
	leave(t, session, served)
	e, err := engine.New(ctx, engine.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, tool := range []string{"write_file", "read_text_file"} {
		if err := e.RegisterTool(engine.HostTool{Path: "mcp/fs/" + tool, Effects: cfg.MCP.Effects("mcp/fs/" + tool),
			Core: func(context.Context, engine.CoreCall) (any, error) {
				t.Error("the replay called the upstream")
				return nil, nil
			}}); err != nil {
			t.Fatal(err)
		}
	}
	i, err := e.Restart(ctx, "mcp-replay")
	if err != nil {
		t.Fatal(err)
	}
	r, err := i.Replay(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Diverged) != 0 || r.Steps < 2 {
		t.Errorf("replay: %d steps, diverged %+v", r.Steps, r.Diverged)
	}
}

// leave closes the client's session and waits for Serve, whose answer
// served carries, to return without an error.
func leave(t *testing.T, session *mcp.ClientSession, served <-chan error) {
	t.Helper()
	session.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after the client left")
	}
}
