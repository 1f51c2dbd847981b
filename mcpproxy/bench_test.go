//go:build e2e

package mcpproxy_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkToolCall measures what the proxy adds to one tools/call: the
// official Go SDK's client calls server-filesystem's read_text_file on a
// small file directly, then through `attune mcp` with one Lua guard on the
// tool (the store in memory, then SQLite), in the same run. Compare the
// ns/op of the proxy cases with direct's. cpu-ns/op is the CPU time the
// spawned process itself used per call (the server for direct, attune
// alone for the proxy cases, from /proc), which a loaded machine's
// scheduling delays do not inflate.
//
//	go test ./mcpproxy -run XXX -bench ToolCall -count 3 -benchtime 2s
func BenchmarkToolCall(b *testing.B) {
	dir, work, file := benchDir(b)
	conf := func(store string) string {
		return benchConf(b, dir, store, map[string]string{"memory": "memory:", "sqlite": filepath.Join(dir, "state.db")}[store])
	}
	server := fsServer(b)
	bin := attuneBin.Path(b)
	cases := []struct {
		name string
		cmd  []string
	}{
		{"direct", []string{"node", server, work}},
		{"proxy-guard-memory", []string{bin, "mcp", "--config", conf("memory"), "--name", "fs", "--", "node", server, work}},
		{"proxy-guard-sqlite", []string{bin, "mcp", "--config", conf("sqlite"), "--name", "fs", "--", "node", server, work}},
	}
	if base := os.Getenv("ATTUNE_MCP_BASELINE"); base != "" { // as in BenchmarkToolCallPaired
		cases = append(cases,
			struct {
				name string
				cmd  []string
			}{"base-guard-memory", []string{base, "mcp", "--config", conf("memory"), "--name", "fs", "--", "node", server, work}},
			struct {
				name string
				cmd  []string
			}{"base-guard-sqlite", []string{base, "mcp", "--config", conf("sqlite"), "--name", "fs", "--", "node", server, work}})
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			client := mcp.NewClient(&mcp.Implementation{Name: "attune-bench", Version: "1"}, nil)
			cmd := exec.Command(c.cmd[0], c.cmd[1:]...)
			session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer session.Close()
			pid := cmd.Process.Pid
			params := &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": file}}
			for range 20 { // warm up both processes
				if _, err := session.CallTool(ctx, params); err != nil {
					b.Fatal(err)
				}
			}
			cpu0 := cpuTime(pid)
			n := 0
			for b.Loop() {
				res, err := session.CallTool(ctx, params)
				if err != nil || res.IsError {
					b.Fatalf("%v %+v", err, res)
				}
				n++
			}
			if cpu1 := cpuTime(pid); cpu0 >= 0 && cpu1 >= 0 && n > 0 {
				b.ReportMetric(float64(cpu1-cpu0)/float64(n), "cpu-ns/op")
			}
		})
	}
}

// BenchmarkToolCallPaired calls the same ways in turn within each
// iteration (direct; through a bare relay, testdata/relay, that only
// copies bytes both ways, the floor of any process in between; through
// the proxy on the memory store, on SQLite; in an order that turns), so
// that the load of a shared machine falls on all of them alike, and reports
// the median of each way, the medians' ratios to direct and the medians'
// additions over direct, and the CPU each way's spawned process used per
// call (the server for direct; the relay or attune alone, not its server, for the
// proxy). With ATTUNE_MCP_BASELINE set to another build of
// attune, that build's proxy runs too (base-memory, base-sqlite), so that
// two versions compare in one run.
//
//	go test ./mcpproxy -run XXX -bench ToolCallPaired -count 3 -benchtime 2000x
func BenchmarkToolCallPaired(b *testing.B) {
	dir, work, file := benchDir(b)
	conf := func(name, store string) string { return benchConf(b, dir, name, store) }
	server, bin, relay := fsServer(b), attuneBin.Path(b), relayBin(b, dir)
	ways := []struct {
		name string
		cmd  []string
	}{
		{"direct", []string{"node", server, work}},
		{"relay", []string{relay, "node", server, work}},
		{"memory", []string{bin, "mcp", "--config", conf("memory", "memory:"), "--name", "fs", "--", "node", server, work}},
		{"sqlite", []string{bin, "mcp", "--config", conf("sqlite", filepath.Join(dir, "state.db")), "--name", "fs", "--", "node", server, work}},
	}
	if base := os.Getenv("ATTUNE_MCP_BASELINE"); base != "" { // another build of attune, to compare two versions in one run
		ways = append(ways,
			struct {
				name string
				cmd  []string
			}{"base-memory", []string{base, "mcp", "--config", conf("memory", "memory:"), "--name", "fs", "--", "node", server, work}},
			struct {
				name string
				cmd  []string
			}{"base-sqlite", []string{base, "mcp", "--config", conf("base-sqlite", filepath.Join(dir, "base.db")), "--name", "fs", "--", "node", server, work}})
	}
	ctx := context.Background()
	sessions := make([]*mcp.ClientSession, len(ways))
	pids := make([]int, len(ways))
	for k, w := range ways {
		client := mcp.NewClient(&mcp.Implementation{Name: "attune-bench", Version: "1"}, nil)
		cmd := exec.Command(w.cmd[0], w.cmd[1:]...)
		s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		sessions[k], pids[k] = s, cmd.Process.Pid
	}
	params := &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": file}}
	call := func(s *mcp.ClientSession) time.Duration {
		start := time.Now()
		res, err := s.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("%v %+v", err, res)
		}
		return time.Since(start)
	}
	for range 20 {
		for _, s := range sessions {
			call(s)
		}
	}
	times := make([][]time.Duration, len(ways))
	// the order turns each iteration: what one way leaves running behind
	// its answer (the journal written behind the call) falls on each other
	// way alike, not always on the one after it
	cpu0 := make([]int64, len(ways))
	for k := range ways {
		cpu0[k] = cpuTime(pids[k])
	}
	for n := 0; b.Loop(); n++ {
		for j := range sessions {
			k := (n + j) % len(sessions)
			times[k] = append(times[k], call(sessions[k]))
		}
	}
	for k := range ways { // the spawned process's own CPU (not its children's)
		if c := cpuTime(pids[k]); c >= 0 && cpu0[k] >= 0 {
			b.ReportMetric(float64(c-cpu0[k])/float64(len(times[k]))/1e3, ways[k].name+"-cpu-µs")
		}
	}
	med := make([]float64, len(ways))
	for k := range ways {
		slices.Sort(times[k])
		med[k] = float64(times[k][len(times[k])/2])
		b.ReportMetric(med[k]/1e3, ways[k].name+"-µs")
	}
	for k := 1; k < len(ways); k++ {
		b.ReportMetric(med[k]/med[0], ways[k].name+"/direct")
		b.ReportMetric((med[k]-med[0])/1e3, ways[k].name+"-added-µs")
	}
}

// relayBin builds testdata/relay into dir.
func relayBin(b *testing.B, dir string) string {
	b.Helper()
	path := filepath.Join(dir, "relay")
	if out, err := exec.Command("go", "build", "-o", path, "./testdata/relay").CombinedOutput(); err != nil {
		b.Fatalf("go build ./testdata/relay: %v\n%s", err, out)
	}
	return path
}

// cpuTime is the user and system CPU time a process used so far, in ns,
// from /proc/PID/stat (clock ticks of 10 ms); -1 when unknown.
func cpuTime(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return (utime + stime) * int64(10*time.Millisecond)
}

func writeFileB(b *testing.B, path, text string) {
	b.Helper()
	if err := mkdirWrite(path, text); err != nil {
		b.Fatal(err)
	}
}

// benchDir makes a benchmark's folder: work/small.txt for the filesystem
// server to read, and a pack with one Lua guard on read_text_file.
func benchDir(b *testing.B) (dir, work, file string) {
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	work = filepath.Join(dir, "work")
	file = filepath.Join(work, "small.txt")
	writeFileB(b, file, "a small file\n")
	writeFileB(b, filepath.Join(dir, "pack", "guard.lua"), `
guard.tool("mcp/fs/read_text_file", function(c, invoke)
  if c.args.path:find("%.%.") then return refuse("no .. in paths") end
  return invoke()
end)
`)
	return dir, work, file
}

// benchConf writes dir/NAME.toml: the guard's bot on the given store, the
// upstream "fs"'s tools reading; it returns the file's path.
func benchConf(b *testing.B, dir, name, store string) string {
	p := filepath.Join(dir, name+".toml")
	writeFileB(b, p, "[engine]\nstore = \""+store+"\"\npacks = [\"pack\"]\n[harness.mcp.tools]\n\"mcp/fs/*\" = [\"read\"]\n[bots.main]\nbehaviors = [\"guard\"]\nceiling = [\"read\"]\n")
	return p
}
