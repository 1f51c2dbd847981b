//go:build e2e

package mcpproxy_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/attune-dev/attune/internal/peertest"
)

// BenchmarkToolCallNode is the goal's measure of `attune mcp`: the official
// TypeScript SDK's client (testdata/benchclient.mjs), as MCP clients in
// the wild are, calls server-filesystem's read_text_file on a small file
// directly and through `attune mcp` with one Lua guard on the tool (memory
// store, SQLite), each way in turn within every round, and the benchmark
// reports each way's p50 and p99 in µs and their ratios to direct's, from
// the same run, and the CPU per call of each way's spawned process (the
// server for direct, attune alone for the others) with the times per call
// one of its threads was put on a CPU (runs: its wake-ups). b.N is the number of calls per way. With
// ATTUNE_MCP_BASELINE set to another build of attune, that build runs
// too (base-memory, base-sqlite), so two versions compare in one run.
//
//	go test -tags e2e ./mcpproxy -run XXX -bench ToolCallNode -benchtime 3000x
func BenchmarkToolCallNode(b *testing.B) {
	dir, work, file := benchDir(b)
	server, bin := fsServer(b), attuneBin.Path(b)
	type way struct {
		Name    string   `json:"name"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	proxy := func(name, bin, store string) way {
		return way{name, bin, []string{"mcp", "--config", benchConf(b, dir, name, store), "--name", "fs", "--", "node", server, work}}
	}
	ways := []way{
		{"direct", "node", []string{server, work}},
		proxy("memory", bin, "memory:"),
		proxy("sqlite", bin, filepath.Join(dir, "state.db")),
	}
	if base := os.Getenv("ATTUNE_MCP_BASELINE"); base != "" {
		ways = append(ways, proxy("base-memory", base, "memory:"), proxy("base-sqlite", base, filepath.Join(dir, "base.db")))
	}
	plan, _ := json.Marshal(map[string]any{
		"peers": peers(b), "ways": ways, "tool": "read_text_file",
		"arguments": map[string]any{"path": file}, "warmup": 100, "calls": b.N,
	})
	planFile := filepath.Join(dir, "plan.json")
	writeFileB(b, planFile, string(plan))
	cmd := exec.Command("node", filepath.Join(peertest.Root(b), "mcpproxy", "testdata", "benchclient.mjs"), planFile)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	b.ResetTimer()
	if err := cmd.Run(); err != nil {
		b.Fatalf("benchclient: %v\n%s", err, stderr.String())
	}
	b.StopTimer()
	var res map[string]struct {
		N        int
		P50, P99 float64
		CPU      float64
		Runs     float64
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		b.Fatalf("benchclient printed %q: %v\n%s", stdout.String(), err, stderr.String())
	}
	d := res["direct"]
	for _, w := range ways {
		r := res[w.Name]
		if r.N != b.N {
			b.Fatalf("%s: %d calls, want %d", w.Name, r.N, b.N)
		}
		b.ReportMetric(r.P50/1e3, w.Name+"-p50-µs")
		b.ReportMetric(r.P99/1e3, w.Name+"-p99-µs")
		if r.CPU >= 0 {
			b.ReportMetric(r.CPU/1e3, w.Name+"-cpu-µs")
			b.ReportMetric(r.Runs, w.Name+"-runs")
		}
		if w.Name != "direct" {
			b.ReportMetric(r.P50/d.P50, w.Name+"-p50/direct")
			b.ReportMetric(r.P99/d.P99, w.Name+"-p99/direct")
		}
	}
	b.ReportMetric(0, "ns/op") // the figures above are the measure; the run's wall time is not
}
