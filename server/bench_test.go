package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
	"testing/fstest"
)

// Round trips over OS pipes, client and server in this process: a tool
// call over serve (its core answered by the client over host/core, no
// floor round trip) with no guard and with one guard, against a bare JSON
// echo over the same kind of pipes (the transport's floor), and the same
// tool calls made in process through the Go API. Each reports the median
// and the 99th percentile of its calls; run with -benchtime 10000x.
//
//	go test ./server -run XXX -bench BenchmarkServeRoundTrip -benchtime 10000x -count 3

type rtClient struct {
	w   *os.File
	r   *bufio.Reader
	buf []byte
}

type rtMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result struct {
		Status string `json:"status"`
	} `json:"result"`
}

// roundTrip sends a request and reads until its answer, answering host/core
// with the call's args.
func (c *rtClient) roundTrip(b *testing.B, req []byte) {
	if _, err := c.w.Write(req); err != nil {
		b.Fatal(err)
	}
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		var m rtMessage
		if err := json.Unmarshal(line, &m); err != nil {
			b.Fatal(err)
		}
		if m.Method == "host/core" {
			c.buf = append(c.buf[:0], `{"jsonrpc":"2.0","id":`...)
			c.buf = append(c.buf, m.ID...)
			c.buf = append(c.buf, `,"result":"data"}`+"\n"...)
			if _, err := c.w.Write(c.buf); err != nil {
				b.Fatal(err)
			}
			continue
		}
		if m.Result.Status != "" && m.Result.Status != "ok" {
			b.Fatalf("%s", line)
		}
		return
	}
}

func pipes(b *testing.B) (clientR, serverW, serverR, clientW *os.File) {
	r1, w1, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	r2, w2, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r1.Close(); w1.Close(); r2.Close(); w2.Close() })
	return r1, w1, r2, w2
}

// echo is the transport's floor: read a line, decode it, answer it.
func echo(in io.Reader, out io.Writer) {
	r := bufio.NewReader(in)
	var buf []byte
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		var m map[string]any
		if json.Unmarshal(line, &m) != nil {
			return
		}
		resp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": map[string]any{"status": "ok", "result": m["params"]}})
		buf = append(append(buf[:0], resp...), '\n')
		if _, err := out.Write(buf); err != nil {
			return
		}
	}
}

func percentiles(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds())/1e3, "median-µs")
	b.ReportMetric(float64(d[len(d)*99/100].Nanoseconds())/1e3, "p99-µs")
}

const guardProgram = `guard.tool("fs/guarded", function(c, invoke) return invoke() end)`

func benchEngineOptions(b *testing.B) engine.Options {
	cfg, err := config.Parse("attune.toml", []byte("[bots.main]\nbehaviors = [\"g\"]\nceiling = [\"read\"]\n"))
	if err != nil {
		b.Fatal(err)
	}
	return engine.Options{Config: cfg, Store: store.NewMemory(), PacksFirst: []pin.Pack{{Name: "t", FS: fstest.MapFS{"g.lua": {Data: []byte(guardProgram)}}}}}
}

func BenchmarkServeRoundTrip(b *testing.B) {
	// echo: the floor of one message round trip; echo-twice: two, the
	// floor of a tool call whose core is the client's (the request, then
	// host/core)
	for trips, name := range []string{"echo", "echo-twice"} {
		b.Run(name, func(b *testing.B) {
			cr, sw, sr, cw := pipes(b)
			go echo(sr, sw)
			c := &rtClient{w: cw, r: bufio.NewReader(cr)}
			req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tool","params":{"instance":"a","path":"fs/plain","args":{"path":"x"}}}` + "\n")
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				for range trips + 1 {
					c.roundTrip(b, req)
				}
				lat = append(lat, time.Since(t0))
			}
			percentiles(b, lat)
		})
	}
	for _, path := range []string{"fs/plain", "fs/guarded"} {
		name := "serve-no-guard"
		if path == "fs/guarded" {
			name = "serve-one-guard"
		}
		b.Run(name, func(b *testing.B) {
			cr, sw, sr, cw := pipes(b)
			srv := New(sw, Options{Engine: benchEngineOptions(b)})
			go srv.Serve(context.Background(), sr)
			b.Cleanup(func() { cw.Close(); srv.Close() })
			c := &rtClient{w: cw, r: bufio.NewReader(cr)}
			for k, m := range []string{
				`"initialize","params":{}`,
				`"tools/register","params":{"path":"` + path + `","effects":["read"]}`,
				`"start","params":{"instance":"a","bot":"main"}`,
			} {
				c.roundTrip(b, []byte(`{"jsonrpc":"2.0","id":"s`+strconv.Itoa(k)+`","method":`+m+"}\n"))
			}
			req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tool","params":{"instance":"a","path":"` + path + `","args":{"path":"x"}}}` + "\n")
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				c.roundTrip(b, req)
				lat = append(lat, time.Since(t0))
			}
			percentiles(b, lat)
		})
		b.Run("go-"+name[len("serve-"):], func(b *testing.B) {
			o := benchEngineOptions(b)
			e, err := engine.New(context.Background(), o)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { e.Close() })
			e.RegisterTool(engine.HostTool{Path: path, Effects: []string{"read"}, Core: func(context.Context, engine.CoreCall) (any, error) { return "data", nil }})
			i, err := e.Start(context.Background(), engine.StartOptions{ID: "a", Bot: "main"})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			call := engine.ToolCall{Path: path, Args: map[string]any{"path": "x"}}
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				if i.Tool(ctx, call).Status != engine.StatusOK {
					b.Fatal("not ok")
				}
				lat = append(lat, time.Since(t0))
			}
			percentiles(b, lat)
		})
	}
}
