package mcpproxy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
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

// FDWriter writes all of a message larger than a socket's buffer to a
// non-blocking socket the poller does not watch, waiting while the peer
// reads; a write after the peer closed fails (EPIPE), with no signal that
// ends the process.
func TestFDWriterSocket(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	w := NewFDWriter(fds[0])
	peer := os.NewFile(uintptr(fds[1]), "peer")
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB, more than a socket holds
	done := make(chan error, 1)
	go func() {
		n, err := w.Write(big)
		if err == nil && n != len(big) {
			err = io.ErrShortWrite
		}
		done <- err
	}()
	got := make([]byte, len(big))
	if _, err := io.ReadFull(peer, got); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("write: %v", err)
	}
	peer.Close()
	if _, err := w.Write([]byte("after\n")); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("a write after the peer closed: %v, want EPIPE", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
