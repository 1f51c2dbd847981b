package mcpproxy

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// rawIO moves everything through a non-blocking pipe: a write larger than
// the pipe's buffer waits in the poller for the reader, and the end of the
// pipe reads as io.EOF.
func TestRawIOPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	rr, ok1 := rawReader(r).(*rawIO)
	ww, ok2 := rawWriter(w).(*rawIO)
	if !ok1 || !ok2 {
		t.Fatal("os.Pipe's files are not read and written raw")
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB, more than a pipe holds
	go func() {
		if n, err := ww.Write(big); err != nil || n != len(big) {
			t.Errorf("write: %d, %v", n, err)
		}
		_ = ww.Close()
	}()
	got, err := io.ReadAll(rr)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read %d bytes, %v; want %d", len(got), err, len(big))
	}
	if _, ok := rawReader(bytes.NewReader(nil)).(*rawIO); ok {
		t.Error("a reader that is not a file was wrapped")
	}
}
