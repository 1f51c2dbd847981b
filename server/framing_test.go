package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// A client whose first message is framed by a Content-Length header (a
// language server's client) is read and answered in that framing: lengths
// in bytes, an oversize message skipped and answered under its id, a
// header block without a length answered -32700, the server going on.
func TestServeHeaderFraming(t *testing.T) {
	cfg, err := config.Parse("attune.toml", []byte(peerConfig))
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := New(outW, Options{MaxMessage: 4096, Engine: engine.Options{Config: cfg, Store: store.NewMemory(),
		PacksFirst: []pin.Pack{{Name: "t", FS: fstest.MapFS{"p.lua": {Data: []byte(peerProgram)}}}}}})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), inR); outW.Close() }()
	defer srv.Close()
	answers := make(chan map[string]any, 10)
	go func() {
		br := bufio.NewReader(outR)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				close(answers)
				return
			}
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "Content-Length:")))
			if err != nil {
				t.Errorf("the server wrote %q, not a Content-Length header", line)
				close(answers)
				return
			}
			if blank, _ := br.ReadString('\n'); blank != "\r\n" {
				t.Errorf("no blank line after the header: %q", blank)
			}
			body := make([]byte, n)
			if _, err := io.ReadFull(br, body); err != nil {
				t.Error(err)
			}
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				t.Errorf("body %q: %v", body, err)
			}
			answers <- m
		}
	}()
	frame := func(body string) { fmt.Fprintf(inW, "Content-Length: %d\r\n\r\n%s", len(body), body) }
	next := func() map[string]any {
		select {
		case m := <-answers:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no answer")
		}
		return nil
	}
	frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	if m := next(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	frame(`{"jsonrpc":"2.0","id":2,"method":"tools/register","params":{"path":"fs/é","effects":["read"]}}`)
	if m := next(); m["id"] != 2.0 || m["error"] != nil {
		t.Fatalf("a body with multibyte text: %v", m)
	}
	frame(`{"jsonrpc":"2.0","id":3,"method":"start","params":{"instance":"` + strings.Repeat("x", 5000) + `"}}`)
	if m := next(); m["id"] != 3.0 || errCode(m) != "-32600 oversize" {
		t.Fatalf("oversize: %v", m)
	}
	io.WriteString(inW, "Content-Type: application/json\r\n\r\n")
	if m := next(); errCode(m) != "-32700 " || !strings.Contains(fmt.Sprint(m["error"]), "Content-Length") {
		t.Fatalf("a header block without a length: %v", m)
	}
	io.WriteString(inW, "Content-Length: many\r\n\r\n")
	if m := next(); errCode(m) != "-32700 " || !strings.Contains(fmt.Sprint(m["error"]), "not a length") {
		t.Fatalf("a length that is not a number: %v", m)
	}
	frame(`{"jsonrpc":"2.0","id":4,"method":"start","params":{"instance":"a","bot":"main"}}`)
	if m := next(); m["id"] != 4.0 || m["error"] != nil {
		t.Fatalf("after the bad frames: %v", m)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
