//go:build e2e

package mcpproxy_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/mcpproxy"
)

// BenchmarkToolCallInProcess runs the proxy in the test's process (the
// upstream is still server-filesystem in node), so that a CPU profile of
// the benchmark shows the proxy's own path: the client's side of the
// pipes, the relay, the chain with one Lua guard and the journal.
//
//	go test ./mcpproxy -run XXX -bench ToolCallInProcess -benchtime 3000x -cpuprofile cpu.out
func BenchmarkToolCallInProcess(b *testing.B) {
	for _, store := range []string{"memory", "sqlite"} {
		b.Run(store, func(b *testing.B) {
			dir, work, file := benchDir(b)
			st := map[string]string{"memory": "memory:", "sqlite": filepath.Join(dir, "state.db")}[store]
			cfgPath := benchConf(b, dir, "attune", st)
			cfg, err := config.Load(cfgPath)
			if err != nil {
				b.Fatal(err)
			}
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			// the peer first: a test failed inside the goroutine below would wait for ever
			server := fsServer(b)
			served := make(chan error, 1)
			go func() {
				served <- mcpproxy.Serve(context.Background(), mcpproxy.Options{
					Config: cfg, In: inR, Out: outW,
					Upstreams: []mcpproxy.Upstream{{Name: "fs", Command: []string{"node", server, work}}},
				})
				outW.Close()
			}()
			ctx := context.Background()
			client := mcp.NewClient(&mcp.Implementation{Name: "attune-bench", Version: "1"}, nil)
			session, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
			if err != nil {
				b.Fatal(err)
			}
			params := &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": file}}
			for range 20 {
				if _, err := session.CallTool(ctx, params); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				res, err := session.CallTool(ctx, params)
				if err != nil || res.IsError {
					b.Fatalf("%v %+v", err, res)
				}
			}
			b.StopTimer()
			session.Close()
			if err := <-served; err != nil {
				b.Fatal(err)
			}
		})
	}
}
