//go:build e2e

package mcpproxy_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/mcpproxy"
	"github.com/attune-dev/attune/store"
)

// journalAppends counts the appends to journal logs that reach the store.
type journalAppends struct {
	store.Store
	n atomic.Int64
}

func (j *journalAppends) Append(ctx context.Context, log string, expected int64, entries [][]byte, call *store.CallRecord) (int64, error) {
	if strings.HasPrefix(log, "journal/") {
		j.n.Add(1)
	}
	return j.Store.Append(ctx, log, expected, entries, call)
}

// The journal entries of tools/calls are written behind their answers,
// once journal_delay has passed, the calls of that while in one append (on
// SQLite, one transaction); the turn's end writes what still waits.
func TestJournalDelayGroupsCalls(t *testing.T) {
	dir := tmpDir(t)
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(work, "a.txt"), "a")
	writeFile(t, filepath.Join(dir, "pack", "g.lua"), `guard.tool("mcp/fs/*", function(c, invoke) return invoke() end)`)
	writeFile(t, filepath.Join(dir, "attune.toml"), "[engine]\npacks = [\"pack\"]\n[harness.mcp]\njournal_delay = \"2s\"\n[bots.main]\nbehaviors = [\"g\"]\n")
	cfg, err := config.Load(filepath.Join(dir, "attune.toml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sq, err := store.OpenSQLite(ctx, filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	st := &journalAppends{Store: sq}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	// the peer first: a test failed inside the goroutine below would wait for ever
	server := fsServer(t)
	served := make(chan error, 1)
	go func() {
		served <- mcpproxy.Serve(ctx, mcpproxy.Options{
			Config: cfg, Store: st, In: inR, Out: outW,
			Upstreams: []mcpproxy.Upstream{{Name: "fs", Command: []string{"node", server, work}}},
		})
		outW.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "attune-delay", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := func() {
		t.Helper()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(work, "a.txt")}})
		if err != nil || res.IsError {
			t.Fatalf("%v %+v", err, res)
		}
	}
	call() // the first lists the tools; its entries wait too
	before := st.n.Load()
	start := time.Now()
	for range 4 {
		call()
	}
	quick := time.Since(start) < time.Second // else a loaded machine: the delay may have ended meanwhile
	if n := st.n.Load(); n != before && quick {
		t.Fatalf("%d journal appends within the delay, want none", n-before)
	}
	deadline := time.Now().Add(10 * time.Second)
	for st.n.Load() == before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := st.n.Load(); n != before+1 && quick || n == before {
		t.Fatalf("%d journal appends after the delay, want one for the five calls", n-before)
	}
	call()
	leave(t, session, served)
	if n := st.n.Load(); n < before+2 {
		t.Fatalf("the turn's end wrote nothing: %d appends", n-before)
	}
}
