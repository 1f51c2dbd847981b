package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// Lines: a line over the limit fails alone (its head and tail kept), the
// next line reads, blank lines are skipped, a last line without its end
// reads.
func TestReaderLines(t *testing.T) {
	long := `{"id":4,"x":"` + strings.Repeat("y", 10000) + `","z":{"id":5}}`
	r := NewReader(strings.NewReader("\n  {\"a\":1}  \r\n"+long+"\n{\"b\":2}"), 1000, Lines)
	if m, err := r.Next(); err != nil || string(m) != `{"a":1}` {
		t.Fatalf("%q %v", m, err)
	}
	_, err := r.Next()
	var tl *TooLongError
	if !errors.As(err, &tl) || tl.Size != len(long)+1 || !bytes.HasPrefix(tl.Head, []byte(`{"id":4`)) || !bytes.HasSuffix(tl.Tail, []byte("{\"id\":5}}\n")) {
		t.Fatalf("long line: %v", err)
	}
	if id, _ := LeadingID(tl.Head); string(id) != "4" {
		t.Errorf("LeadingID: %s", id)
	}
	if m, err := r.Next(); err != nil || string(m) != `{"b":2}` {
		t.Fatalf("after: %q %v", m, err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
	if r.Headers() {
		t.Error("lines read as headers")
	}
}

// Detect: a first Content-Length header frames the stream (and the
// writer's answers) by headers; a block without a length fails alone; a
// body over the limit is skipped with its head.
func TestReaderHeaders(t *testing.T) {
	in := "Content-Length: 7\r\n\r\n{\"a\":1}" + "X-Other: 1\r\n\r\n" + "Content-Length: 20\r\n\r\n{\"id\":9,\"p\":\"xxxxx\"}" + "content-length: 2\r\n\r\n{}"
	r := NewReader(strings.NewReader(in), 10, Detect)
	var out bytes.Buffer
	w := NewWriter(&out, r)
	if m, err := r.Next(); err != nil || string(m) != `{"a":1}` || !r.Headers() {
		t.Fatalf("%q %v", m, err)
	}
	if _, err := r.Next(); !errors.As(err, new(*FrameError)) {
		t.Fatalf("no length: %v", err)
	}
	_, err := r.Next()
	var tl *TooLongError
	if !errors.As(err, &tl) || tl.Size != 20 {
		t.Fatalf("oversize: %v", err)
	}
	if id, _ := LeadingID(tl.Head); string(id) != "9" {
		t.Errorf("id of the oversize body: %s", id)
	}
	if m, err := r.Next(); err != nil || string(m) != `{}` {
		t.Fatalf("last: %q %v", m, err)
	}
	_ = w.Write([]byte(`{"b":2}`))
	if out.String() != "Content-Length: 7\r\n\r\n{\"b\":2}" {
		t.Errorf("writer: %q", out.String())
	}
	// a first line that is no header: lines, and the writer writes lines
	r2 := NewReader(strings.NewReader("{\"a\":1}\nContent-Length: 2\n"), 100, Detect)
	out.Reset()
	w2 := NewWriter(&out, r2)
	if m, _ := r2.Next(); string(m) != `{"a":1}` || r2.Headers() {
		t.Fatalf("lines: %q", m)
	}
	_ = w2.Write([]byte(`{}`))
	if out.String() != "{}\n" {
		t.Errorf("writer: %q", out.String())
	}
}

func TestFindID(t *testing.T) {
	for _, c := range []struct{ head, tail, want, kind string }{
		{`{"jsonrpc":"2.0","id":1.5,"method":"x","params":{"a":`, "", `1.5`, KindRequest},
		{`{"method":"x","params":{"id":3,"big":"`, "", `3`, KindRequest}, // FindID looks further; LeadingID would not
		{`{"result":{"x":"`, `"},"id":"late"}`, `"late"`, KindAnswer},
		{`not json "id": 7`, "", `7`, ""},
		{`{"id": "a b" , "x`, "", `"a b"`, ""},
	} {
		id, kind := FindID([]byte(c.head), []byte(c.tail))
		if string(id) != c.want || kind != c.kind {
			t.Errorf("%s…%s: %s %q", c.head, c.tail, id, kind)
		}
	}
	if id, _ := LeadingID([]byte(`{"method":"x","params":{"id":3,"big":"`)); id != nil {
		t.Errorf("LeadingID took a nested id: %s", id)
	}
}

func TestCalls(t *testing.T) {
	var c Calls[string]
	a, _ := c.Add("a")
	b, _ := c.Add("b")
	if v, ok := c.Take(a); !ok || v != "a" || c.Waits(a) || !c.Sent(a) || c.Sent(b+1) {
		t.Fatal("take")
	}
	if got := c.TakeIf(func(id int64, v string) bool { return v == "b" }); len(got) != 1 || c.Waits(b) {
		t.Fatal("TakeIf", got)
	}
	c.Add("c")
	if got := c.Close(); len(got) != 1 {
		t.Fatal("close", got)
	}
	if _, ok := c.Add("d"); ok {
		t.Fatal("added after close")
	}
	for raw, want := range map[string]int64{`"e12"`: 12, `12`: 12, `12.0`: 12, `1.2e1`: 12, `"12"`: 0, `-1`: 0, `1.5`: 0, `"e"`: 0} {
		prefix := ""
		if strings.HasPrefix(raw, `"e`) || raw == `"e"` {
			prefix = "e"
		}
		if n, ok := ParseCallID([]byte(raw), prefix); n != want || ok != (want != 0) {
			t.Errorf("ParseCallID(%s, %q) = %d %v", raw, prefix, n, ok)
		}
	}
}
