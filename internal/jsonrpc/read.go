// Package jsonrpc is the wire of JSON-RPC 2.0 that `attune serve`
// (package server) and `attune mcp` (package mcpproxy) share: messages
// read from a stream in either framing (one per line, or after
// Content-Length headers as a language server's client writes them) under
// a size limit, a bad line failing alone (the next one is read as usual),
// with what it takes to answer it (the id found in it); messages written
// one at a time in the framing the peer chose; ids kept as the peer wrote
// them; and the table of calls sent to the peer that await its answer.
package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
)

// Framing is how messages are delimited on a stream.
type Framing int

const (
	// Lines: one message per line (the MCP stdio transport).
	Lines Framing = iota
	// Detect: the first message says: after a Content-Length header the
	// stream is framed by headers, else by lines (attune serve).
	Detect
)

// keep is how much of a line over the limit is kept, at its start and at
// its end, to find its id.
const keep = 4096

// TooLongError is a message longer than the limit, skipped whole. Head and
// Tail are its first and last bytes (at most 4 KiB each), where its id
// most often is (FindID).
type TooLongError struct {
	Size  int // bytes read of it
	Limit int
	Head  []byte
	Tail  []byte
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("a message of %d bytes, over the limit of %d", e.Size, e.Limit)
}

// FrameError is a header block that does not say a message's length: the
// block is skipped.
type FrameError struct{ Why string }

func (e *FrameError) Error() string { return e.Why }

// Reader reads messages from a stream. A *TooLongError or a *FrameError
// fails one message: the next call reads the next one. At the end of the
// stream it returns io.EOF (also when the stream ends inside a message).
type Reader struct {
	br       *bufio.Reader
	max      int
	detect   bool
	detected bool
	headers  atomic.Bool // the stream is framed by headers (Detect saw one)
}

// NewReader reads r with messages of at most max bytes.
func NewReader(r io.Reader, max int, f Framing) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: max, detect: f == Detect}
}

// Headers reports whether the stream turned out framed by headers: a
// Writer for the same peer frames its messages alike.
func (r *Reader) Headers() bool { return r.headers.Load() }

// Next returns the next message, with the white space around it trimmed;
// empty lines are skipped. The slice is the caller's.
func (r *Reader) Next() ([]byte, error) {
	for {
		if r.headers.Load() {
			line, err := r.br.ReadSlice('\n')
			if err != nil {
				if errors.Is(err, bufio.ErrBufferFull) {
					return nil, &FrameError{"a header line longer than 64 KiB"}
				}
				return nil, err
			}
			return r.framed(line)
		}
		first := r.detect && !r.detected
		limit := r.max
		if first {
			limit = max(limit, keep) // a header line, whatever the limit
		}
		line, err := r.line(limit)
		if err != nil {
			return nil, err
		}
		size := len(line)
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if first {
			r.detected = true
			if _, ok, _ := contentLength(line); ok {
				r.headers.Store(true)
				return r.framed(line)
			}
			if len(line) > r.max {
				return nil, &TooLongError{Size: size, Limit: r.max, Head: line[:min(len(line), keep)], Tail: line[max(0, len(line)-keep):]}
			}
		}
		return line, nil
	}
}

// line reads one line of at most limit bytes (its line end not counted).
// A longer one is read to its end and skipped, its head and tail kept.
func (r *Reader) line(limit int) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(buf)+len(bytes.TrimRight(chunk, "\r\n")) > limit {
			head := append([]byte(nil), buf[:min(len(buf), keep)]...)
			head = append(head, chunk[:min(len(chunk), keep-len(head))]...)
			n := len(buf) + len(chunk)
			tail := append([]byte(nil), chunk[max(0, len(chunk)-keep):]...)
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = r.br.ReadSlice('\n')
				n += len(chunk)
				tail = append(tail, chunk...)
				tail = tail[max(0, len(tail)-keep):]
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, &TooLongError{Size: n, Limit: r.max, Head: head, Tail: tail}
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(bytes.TrimSpace(buf)) > 0:
			return buf, nil
		default:
			return nil, err
		}
	}
}

// contentLength reads a Content-Length header line.
func contentLength(line []byte) (n int, ok bool, err error) {
	k, v, found := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
	if !found || !strings.EqualFold(string(bytes.TrimSpace(k)), "Content-Length") {
		return 0, false, nil
	}
	n, err = strconv.Atoi(string(bytes.TrimSpace(v)))
	if err != nil || n < 0 {
		return 0, true, &FrameError{fmt.Sprintf("a Content-Length header that is not a length: %q", bytes.TrimSpace(line))}
	}
	return n, true, nil
}

// framed reads one message framed by headers, whose first header line was
// read already: headers up to an empty line, then Content-Length bytes.
func (r *Reader) framed(first []byte) ([]byte, error) {
	n, line, headers := -1, first, false
	var bad error
	for {
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			if headers {
				break // the empty line that ends the headers
			}
		} else if l, ok, err := contentLength(line); err != nil {
			headers, bad = true, err
		} else {
			headers = true
			if ok {
				n = l
			}
		}
		var err error
		if line, err = r.br.ReadSlice('\n'); err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return nil, &FrameError{"a header line longer than 64 KiB"}
			}
			return nil, err
		}
	}
	if bad != nil {
		return nil, bad
	}
	if n < 0 {
		return nil, &FrameError{"a header block without Content-Length"}
	}
	if n > r.max {
		head, _ := r.br.Peek(min(n, keep))
		head = append([]byte(nil), head...)
		if _, err := r.br.Discard(n); err != nil {
			return nil, err
		}
		return nil, &TooLongError{Size: n, Limit: r.max, Head: head}
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r.br, body); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, io.EOF // the input ended inside a message
		}
		return nil, err
	}
	return bytes.TrimSpace(body), nil
}
