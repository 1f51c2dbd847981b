package mcpproxy_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"attune/config"
	"attune/mcpproxy"
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
			dir, err := filepath.EvalSymlinks(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			work := filepath.Join(dir, "work")
			file := filepath.Join(work, "small.txt")
			writeFileB(b, file, "a small file\n")
			writeFileB(b, filepath.Join(dir, "pack", "guard.lua"), `
guard.tool("mcp/fs/read_text_file", function(c, invoke)
  if c.args.path:find("%.%.") then return refuse("no .. in paths") end
  return invoke()
end)
`)
			st := map[string]string{"memory": "memory:", "sqlite": filepath.Join(dir, "state.db")}[store]
			writeFileB(b, filepath.Join(dir, "attune.toml"), "[engine]\nstore = \""+st+"\"\npacks = [\"pack\"]\n[harness.mcp.tools]\n\"mcp/fs/*\" = [\"read\"]\n[bots.main]\nbehaviors = [\"guard\"]\nceiling = [\"read\"]\n")
			cfg, err := config.Load(filepath.Join(dir, "attune.toml"))
			if err != nil {
				b.Fatal(err)
			}
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			served := make(chan error, 1)
			go func() {
				served <- mcpproxy.Serve(context.Background(), mcpproxy.Options{
					Config: cfg, In: inR, Out: outW,
					Upstreams: []mcpproxy.Upstream{{Name: "fs", Command: []string{"node", fsServer(b), work}}},
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
