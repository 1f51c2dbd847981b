package mcpproxy_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/internal/peertest"
	"github.com/attune-dev/attune/mcpproxy"
)

// BenchmarkToolCallFake is the proxy's own path with nothing slow around
// it: the proxy in the test's process on pipes, one Lua guard on the tool
// (memory store), and testdata/fakeupstream (a small Go server) as the
// upstream; the client writes and reads raw lines. A CPU or allocation
// profile of it shows what one tools/call costs the proxy (its relay, the
// chain, the journal), with no Node and no SDK in the way.
//
//	go test ./mcpproxy -run XXX -bench ToolCallFake -benchmem -cpuprofile cpu.out
func BenchmarkToolCallFake(b *testing.B) {
	rootDir = peertest.Root(b)
	bin, err := fakeUpstream()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	put := func(path, text string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	put(filepath.Join(dir, "pack", "guard.lua"), `
guard.tool("mcp/fs/read_text_file", function(c, invoke)
  if c.args.path:find("%.%.") then return refuse("no .. in paths") end
  return invoke()
end)
`)
	put(filepath.Join(dir, "attune.toml"), "[engine]\nstore = \"memory:\"\npacks = [\"pack\"]\n[harness.mcp.tools]\n\"mcp/fs/*\" = [\"read\"]\n[bots.main]\nbehaviors = [\"guard\"]\nceiling = [\"read\"]\n")
	cfg, err := config.Load(filepath.Join(dir, "attune.toml"))
	if err != nil {
		b.Fatal(err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	served := make(chan error, 1)
	go func() {
		served <- mcpproxy.Serve(context.Background(), mcpproxy.Options{Config: cfg, In: inR, Out: outW,
			Upstreams: []mcpproxy.Upstream{{Name: "fs", Command: []string{bin, "read_text_file"}}}})
		outW.Close()
	}()
	r := bufio.NewReaderSize(outR, 64<<10)
	call := func(line string) string {
		if _, err := inW.WriteString(line + "\n"); err != nil {
			b.Fatal(err)
		}
		s, err := r.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	call(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
	if _, err := inW.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"); err != nil {
		b.Fatal(err)
	}
	call(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	n := 2
	req := func() string {
		n++
		return `{"jsonrpc":"2.0","id":` + strconv.Itoa(n) + `,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/tmp/work/small.txt"}}}`
	}
	for range 50 {
		call(req())
	}
	for b.Loop() {
		if s := call(req()); !strings.Contains(s, `"result"`) || strings.Contains(s, `"isError":true`) {
			b.Fatalf("answer: %s", s)
		}
	}
	b.StopTimer()
	inW.Close()
	if err := <-served; err != nil {
		b.Fatal(err)
	}
}
