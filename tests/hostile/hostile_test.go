// Package hostile is the hostile-input regression suite: every attack a
// behavior can make on its host, each with the clear error it must get.
// The scenario files beside this one run with the other scenarios (go test
// ./tests, attune test tests/); the attacks here need a process of their
// own: each memory attack runs in a child process (this test binary run
// again), which reports its outcome and its peak RSS, so one attack's
// memory is measured alone, and a regression kills a child (a heap guard
// ends it over 1.5 GiB), never the test run or the machine.
package hostile

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

// childEnv names the attack a child process runs.
const childEnv = "ATTUNE_HOSTILE_ATTACK"

// heapGuard is the Go heap at which a child gives up: far above what any
// attack may reach with memory_limit = 128MiB, far below swapping.
const heapGuard = 1536 << 20

// maxRSS bounds a child's peak RSS in MiB (the race detector's shadow
// memory about doubles it).
var maxRSS = map[bool]int{false: 800, true: 2000}[raceEnabled]

type attack struct {
	name  string
	src   string // hog.lua; the tool hog/run is the attack
	calls int    // how many times to call it (default 1)
	want  string // the error the attack must fail with
	load  bool   // the attack is at load: the start fails
}

var memoryAttacks = []attack{
	{name: "s = s .. s in a loop", want: "cancelled: memory limit", src: `
define.tool("hog/run", function() local s = "x" while true do s = s .. s end end, {effect = {"read"}})`},
	{name: "s = s .. s caught by pcall", want: "cancelled: memory limit", src: `
define.tool("hog/run", function() pcall(function() local s = "x" while true do s = s .. s end end) return "escaped" end, {effect = {"read"}})`},
	{name: "a table grown without end", want: "cancelled: memory limit", src: `
define.tool("hog/run", function() local t, i = {}, 0 while true do i = i + 1 t[i] = {i, string.rep("x", 4096) .. i} end end, {effect = {"read"}})`},
	{name: "globals keeping 16 MiB strings", calls: 100, want: "cancelled: memory limit", src: `
keep = {}
define.tool("hog/run", function() keep[#keep + 1] = string.rep("x", 2^24) .. #keep local n = 0 for i = 1, 3e5 do n = n + i end end, {effect = {"read"}})`},
	{name: "table.concat with a 16 MiB separator", want: "memory: table.concat", src: `
define.tool("hog/run", function() local t = {} for i = 1, 1000 do t[i] = "x" end return #table.concat(t, string.rep("s", 2^24)) end, {effect = {"read"}})`},
	{name: "string.gsub with a large replacement", want: "memory: string.gsub", src: `
define.tool("hog/run", function() return #string.gsub(string.rep("x", 1000), "x", string.rep("y", 2^20)) end, {effect = {"read"}})`},
	{name: "string.rep of 2 GiB", want: "memory: string.rep", src: `
define.tool("hog/run", function() return #string.rep("x", 2^31) end, {effect = {"read"}})`},
	{name: "string.format of large strings", want: "memory: string.format", src: `
define.tool("hog/run", function() local s = string.rep("x", 2^23) return #string.format("%s%s%s%s", s, s, s, s) end, {effect = {"read"}})`},
	{name: "a tool result of 2^24 shared leaves", want: "memory: over the data limit", src: `
define.tool("hog/run", function() local t = {} for i = 1, 24 do t = {a = t, b = t} end return t end, {effect = {"read"}})`},
	{name: "call.tool arguments of 2^24 shared leaves", want: "memory: over the data limit", src: `
define.tool("hog/ping", function() return "pong" end, {effect = {"read"}})
define.tool("hog/run", function() local t = {} for i = 1, 24 do t = {a = t, b = t} end local o = call.tool("hog/ping", t) assert(o.status == "ok", o.error) end, {effect = {"read"}})`},
	{name: "a proposal of 2^24 shared leaves", want: "memory: over the data limit", src: `
define.reducer("hog", function(s) return s end, {init = {}})
define.method("hog", "add", function(ctx, s, input) local t = {} for i = 1, 24 do t = {a = t, b = t} end propose({type = "x", t = t}) end, {kind = "command"})
define.tool("hog/run", function() return call.method("hog", "add", {}) end, {effect = {"read"}})`},
	{name: "an :input schema of 60^4 shared fields", load: true, want: "memory: over the data limit", src: `
local level = {}
for i = 1, 60 do level["f" .. i] = "string" end
for d = 1, 3 do local up = {} for i = 1, 60 do up["f" .. i] = level end level = up end
define.reducer("hog", function(s) return s end, {init = {}})
define.method("hog", "put", function() return true end, {kind = "query", input = level})`},
}

// childResult is what a child prints on its last line.
type childResult struct {
	Status  string `json:"status"`
	Error   string `json:"error"`
	Calls   int    `json:"calls"`
	Ping    string `json:"ping"`
	PeakRSS int64  `json:"peak_rss_kib"`
	Elapsed string `json:"elapsed"`
}

func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		os.Exit(runChild(name))
	}
	os.Exit(m.Run())
}

// Every memory attack fails with its clear error, the registry stays usable
// (a ping after it answers), and the host's peak RSS stays bounded.
func TestMemoryAttacks(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| attack | outcome | peak RSS of the host process |\n|---|---|---|\n")
	for _, a := range memoryAttacks {
		t.Run(a.name, func(t *testing.T) {
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+a.name)
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			var res childResult
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if jerr := json.Unmarshal([]byte(lines[len(lines)-1]), &res); jerr != nil {
				t.Fatalf("child: %v, %v; output:\n%s", err, jerr, out)
			}
			fmt.Fprintf(&table, "| %s | %s after %d call(s), %s | %d MiB |\n", a.name, res.Error, res.Calls, res.Elapsed, res.PeakRSS>>10)
			if res.Status != "failed" || !strings.Contains(res.Error, a.want) {
				t.Errorf("status %s, error %q; want failed with %q", res.Status, res.Error, a.want)
			}
			if !a.load && res.Ping != "pong" {
				t.Errorf("the registry did not answer after the attack: %q", res.Ping)
			}
			if limit := int64(maxRSS); res.PeakRSS > limit<<10 {
				t.Errorf("peak RSS %d MiB, over %d MiB", res.PeakRSS>>10, limit)
			}
		})
	}
	t.Logf("memory attacks (engine.memory_limit = 128MiB; race detector: %v):\n%s", raceEnabled, table.String())
}

func runChild(name string) int {
	var a *attack
	for k := range memoryAttacks {
		if memoryAttacks[k].name == name {
			a = &memoryAttacks[k]
		}
	}
	report := func(r childResult) int {
		r.PeakRSS = peakRSS()
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
		return 0
	}
	if a == nil {
		return report(childResult{Status: "error", Error: "no attack named " + name})
	}
	go func() { // the heap guard: a regression ends the child, not the machine
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if s[0].Value.Uint64() > heapGuard {
				report(childResult{Status: "crash", Error: "the host's heap went over 1.5 GiB (the heap guard stopped it)"})
				os.Exit(3)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	e, err := newEngine(a.src, "128MiB", "20s")
	if err != nil {
		return report(childResult{Status: "error", Error: err.Error()})
	}
	defer e.Close()
	ctx := context.Background()
	start := time.Now()
	i, err := e.Start(ctx, engine.StartOptions{ID: "hog", Bot: "main"})
	if err != nil {
		return report(childResult{Status: "failed", Error: err.Error(), Elapsed: time.Since(start).Round(time.Millisecond).String()})
	}
	res := childResult{Status: "ok"}
	calls := max(a.calls, 1)
	for n := 1; n <= calls; n++ {
		out := i.Tool(ctx, engine.ToolCall{Path: "hog/run"})
		res.Calls = n
		if out.Status != engine.StatusOK {
			res.Status, res.Error = string(out.Status), out.Error
			break
		}
	}
	res.Elapsed = time.Since(start).Round(time.Millisecond).String()
	i2, err := e.Start(ctx, engine.StartOptions{ID: "ping", Bot: "ping"})
	if err == nil {
		res.Ping = fmt.Sprint(i2.Tool(ctx, engine.ToolCall{Path: "ping/ping"}).Result)
	}
	if out := i.Tool(ctx, engine.ToolCall{Path: "ping/ping"}); out.Status != engine.StatusOK {
		res.Ping = "the attacked instance: " + out.Error
	}
	return report(res)
}

// newEngine is an engine on a memory store with the programs hog (src)
// and ping, two bots: main (hog and ping) and ping.
func newEngine(src, memoryLimit, budget string) (*engine.Engine, error) {
	cfg, err := config.Parse("attune.toml", []byte(fmt.Sprintf(`[engine]
memory_limit = %q
callback_budget = %q
[bots.main]
behaviors = ["hog", "ping"]
ceiling = ["read"]
[bots.ping]
behaviors = ["ping"]
ceiling = ["read"]
`, memoryLimit, budget)))
	if err != nil {
		return nil, err
	}
	fsys := fstest.MapFS{
		"hog.lua":  {Data: []byte(src)},
		"ping.lua": {Data: []byte(`define.tool("ping/ping", function() return "pong" end, {effect = {"read"}})`)},
	}
	return engine.New(context.Background(), engine.Options{Config: cfg, Store: store.NewMemory(),
		PacksFirst: []pin.Pack{{Name: "hostile", FS: fsys}}})
}

// peakRSS is the process's peak resident set size in KiB (VmHWM).
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return -1
}

// A nested call spends what its caller has left: a 1 s callback that
// calls into another program which spins, then spins itself, is done in
// about 1 s, not 1 s for each (R1.11).
func TestNestedCallsSpendTheCallersBudget(t *testing.T) {
	cfg, err := config.Parse("attune.toml", []byte(`[engine]
callback_budget = "1s"
[bots.main]
behaviors = ["a", "b"]
ceiling = ["read"]
`))
	if err != nil {
		t.Fatal(err)
	}
	spin := `local function spin() local n = 0 while true do n = n + 1 end end
`
	fsys := fstest.MapFS{
		"a.lua": {Data: []byte(spin + `
define.tool("a/outer", function() call.tool("b/inner", {}) spin() end, {effect = {"read"}})
define.tool("a/chain", function() call.tool("b/middle", {}) spin() end, {effect = {"read"}})
define.tool("a/innermost", function() spin() end, {effect = {"read"}})
define.tool("a/method", function() pcall(call.method, "b", "spin", {}) spin() end, {effect = {"read"}})`)},
		"b.lua": {Data: []byte(spin + `
define.tool("b/inner", function() spin() end, {effect = {"read"}})
define.tool("b/middle", function() call.tool("a/innermost", {}) spin() end, {effect = {"read"}})
define.reducer("b", function(s) return s end, {init = {}})
define.method("b", "spin", function() spin() end, {kind = "query"})`)},
	}
	e, err := engine.New(context.Background(), engine.Options{Config: cfg, Store: store.NewMemory(),
		PacksFirst: []pin.Pack{{Name: "hostile", FS: fsys}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	i, err := e.Start(ctx, engine.StartOptions{ID: "a", Bot: "main"})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"a/outer", "a/chain", "a/method"} {
		start := time.Now()
		out := i.Tool(ctx, engine.ToolCall{Path: path})
		d := time.Since(start)
		if out.Status != engine.StatusFailed || !strings.Contains(out.Error, "cancelled: time budget") {
			t.Errorf("%s: %+v", path, out)
		}
		// each nested callback with a budget of its own would take at least
		// 2 s of script time (two callbacks) or 3 s (three), however loaded
		// the machine: a shared budget ends near 1 s, and a load that
		// delays the watchdog stretches it, so the bound sits just under 2 s
		if d >= 1950*time.Millisecond {
			t.Errorf("%s took %v: the nested calls did not spend the caller's budget", path, d)
		}
		t.Logf("%s: %v", path, d)
	}
}
