package jsonrpc

import (
	"io"
	"strconv"
	"sync"
	"sync/atomic"
)

// Writer writes whole messages to a stream, one at a time, framed as the
// peer's Reader found its messages framed (by lines when it has none).
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	peer atomic.Pointer[Reader]
}

// NewWriter writes to w in the framing peer reads (nil: lines).
func NewWriter(w io.Writer, peer *Reader) *Writer {
	wr := &Writer{w: w}
	wr.peer.Store(peer)
	return wr
}

// FrameAs has w frame its messages as peer's are framed from now on.
func (w *Writer) FrameAs(peer *Reader) { w.peer.Store(peer) }

// Write writes one message, msg, with its frame (a line end, or a
// Content-Length header), in one write. It may append to msg's backing
// array: msg is the caller's buffer, not one shared.
func (w *Writer) Write(msg []byte) error {
	if peer := w.peer.Load(); peer != nil && peer.Headers() {
		b := make([]byte, 0, len(msg)+32)
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(msg)), 10)
		b = append(b, "\r\n\r\n"...)
		b = append(b, msg...)
		w.mu.Lock()
		defer w.mu.Unlock()
		_, err := w.w.Write(b)
		return err
	}
	msg = append(msg, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.w.Write(msg)
	return err
}
