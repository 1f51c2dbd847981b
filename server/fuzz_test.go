package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/store"
)

// FuzzServe feeds the message reader anything, with the engine behind it:
// bad input never crashes the server, never stops it from answering, and
// never loses a live instance (unless the input itself names it).
func FuzzServe(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tool","params":{"instance":"a","path":"fs/plain","args":1}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"turn/begin","params":{"instance":"a"}},{"jsonrpc":"2.0","method":"round/begin","params":{"instance":"a"}}]`,
		`{"jsonrpc":"2.0","id":"e1","result":{"refused":true}}` + "\n" + `{"jsonrpc":"2.0","id":"e1","result":1}`,
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`,
		`{"jsonrpc":"2.0","id":[],"method":"x"}`,
		`[]`, `[1,2,3]`, `{`, `null`, `"x"`, "\x00\xff", strings.Repeat("[", 5000),
		`{"jsonrpc":"2.0","id":2,"method":"start","params":{"instance":"b","bot":"main"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"rollback","params":{"instance":"a","to_turn":-1}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tool","params":{"instance":"a","path":"fs/plain","args":"` + strings.Repeat("x", 3000) + `"}}`,
	} {
		f.Add([]byte(s))
	}
	// A callback whose answer the input garbled waits for host_timeout: long
	// enough that a loaded machine still answers the final calls in time,
	// short enough that such an input does not stall the fuzzer.
	cfg, err := config.Parse("attune.toml", []byte("[engine]\nhost_timeout = \"1s\"\n[bots.main]\nbehaviors = []\nceiling = [\"read\"]\n"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		srv := New(outW, Options{MaxMessage: 2048, Engine: engine.Options{Config: cfg, Store: store.NewMemory()}})
		defer srv.Close()
		done := make(chan error, 1)
		go func() { done <- srv.Serve(context.Background(), inR); outW.Close() }()
		final := make(chan map[string]any, 4)
		go func() { // the client: answers callbacks, collects the final answers
			sc := bufio.NewScanner(outR)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				line := sc.Bytes()
				if !json.Valid(line) {
					t.Errorf("the server wrote a line that is not JSON: %q", line)
					continue
				}
				var m map[string]any
				if json.Unmarshal(line, &m) != nil {
					continue // a batch answer
				}
				if _, isCall := m["method"].(string); isCall && m["id"] != nil {
					ans, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": "ok"})
					go inW.Write(append(ans, '\n'))
					continue
				}
				if id, _ := m["id"].(string); strings.HasPrefix(id, "final-") {
					final <- m
				}
			}
		}()
		write := func(s string) { _, _ = inW.Write([]byte(s + "\n")) }
		write(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{}}`)
		write(`{"jsonrpc":"2.0","id":"reg","method":"tools/register","params":{"path":"fs/plain","effects":["read"]}}`)
		write(`{"jsonrpc":"2.0","id":"k","method":"start","params":{"instance":"keep","bot":"main"}}`)
		_, _ = inW.Write(data)
		write("")
		write(`{"jsonrpc":"2.0","id":"final-1","method":"start","params":{"instance":"zz-final","bot":"main"}}`)
		write(`{"jsonrpc":"2.0","id":"final-2","method":"tool","params":{"instance":"zz-final","path":"fs/plain","args":1}}`)
		write(`{"jsonrpc":"2.0","id":"final-3","method":"tool","params":{"instance":"keep","path":"fs/plain","args":1}}`)
		got := map[string]map[string]any{}
		for len(got) < 3 {
			select {
			case m := <-final:
				got[m["id"].(string)] = m
			case <-time.After(20 * time.Second):
				t.Fatalf("the server stopped answering after %q (answers: %v)", data, got)
			}
		}
		if r, _ := got["final-2"]["result"].(map[string]any); r["status"] != "ok" {
			t.Fatalf("a new instance does not work after %q: %v", data, got)
		}
		if !bytes.Contains(data, []byte("keep")) {
			if r, _ := got["final-3"]["result"].(map[string]any); r["status"] != "ok" {
				t.Fatalf("the instance was lost after %q: %v", data, got["final-3"])
			}
		}
		inW.Close()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
