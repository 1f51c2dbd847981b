package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// Reading an event, failing closed. A tool call attune cannot read is a
// tool call it cannot judge, so it is denied, however the input is broken:
// more than MaxEvent bytes, not valid UTF-8 (a guard would judge
// replacement characters, not the bytes the agent runs), not one JSON
// value (a byte order mark, truncated, trailing junk), nested deeper than
// Go's decoder goes (10,000 levels: the model writes tool_input), or not
// complete within the timeout. The event's name is then read from the start
// of the input by a scanner with no depth limit (eventName), and when even
// that fails the answer is the strictest the dialect has for a tool call
// (Strict): a deny of its PreToolUse.

// ErrIncomplete: the event did not arrive whole within the timeout.
var ErrIncomplete = errors.New("incomplete hook event")

// Read reads one event from data as d does. On an error the Event is what
// the input names, for BadEvent: the event's kind when its name is found,
// Strict(d) when no name known to d is found.
func Read(d Dialect, data []byte) (Event, error) {
	if len(data) > MaxEvent {
		return Named(d, data), fmt.Errorf("%w: the event is larger than %d bytes", ErrBadEvent, MaxEvent)
	}
	if !utf8.Valid(data) {
		return Named(d, data), fmt.Errorf("%w: the event is not valid UTF-8", ErrBadEvent)
	}
	ev, err := d.Parse(data)
	if err != nil && ev.Kind != ToolPre && ev.Name == "" {
		// the dialect read no name (it stops at the first syntax error,
		// before decoding anything): read it from the start of the input
		ev = Named(d, data)
	}
	return ev, err
}

// Named is the event data names, read from its start (the agents write the
// name before the tool's input) with no depth or size limit, for input that
// cannot be read whole: the event's kind and name when the name is found and
// known to d, else Strict(d).
func Named(d Dialect, data []byte) Event {
	name, ok := eventName(data)
	if !ok || name == "" {
		return Strict(d)
	}
	k, known := d.kind(name)
	if !known {
		// a name d does not know, in input it cannot read: nothing says it
		// is not a tool call
		return Strict(d)
	}
	return Event{Kind: k, Name: name}
}

// Strict is the event to answer when input names no event attune can find:
// d's tool call, so that the answer (BadEvent) denies whatever tool call it
// may have been.
func Strict(d Dialect) Event { return Event{Kind: ToolPre, Name: d.pre} }

// eventName finds the top-level "hook_event_name" string of a JSON object
// at the start of data, tolerating a byte order mark, truncation or junk
// after it, and values of any depth before it (skipped by counting, not by
// recursion). ok is false when the name cannot be found.
func eventName(data []byte) (string, bool) {
	s := &scan{b: bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))}
	s.ws()
	if !s.eat('{') {
		return "", false
	}
	for {
		s.ws()
		key, ok := s.str()
		if !ok {
			return "", false
		}
		s.ws()
		if !s.eat(':') {
			return "", false
		}
		s.ws()
		if key == "hook_event_name" {
			v, ok := s.str()
			return v, ok
		}
		if !s.skip() {
			return "", false
		}
		s.ws()
		if !s.eat(',') {
			return "", false
		}
	}
}

type scan struct {
	b []byte
	i int
}

func (s *scan) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *scan) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// strEnd returns the index just past the string starting at s.i, or -1.
func (s *scan) strEnd() int {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return -1
	}
	for j := s.i + 1; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// str reads a JSON string.
func (s *scan) str() (string, bool) {
	end := s.strEnd()
	if end < 0 {
		return "", false
	}
	var v string
	if json.Unmarshal(s.b[s.i:end], &v) != nil {
		return "", false
	}
	s.i = end
	return v, true
}

// skip passes over one JSON value, however deep, checking no more of it
// than its brackets and strings.
func (s *scan) skip() bool {
	depth := 0
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			end := s.strEnd()
			if end < 0 {
				return false
			}
			s.i = end
		case '{', '[':
			depth++
			s.i++
		case '}', ']':
			if depth == 0 {
				return false
			}
			depth--
			s.i++
		default:
			if depth == 0 { // a scalar: up to the next delimiter
				for s.i < len(s.b) && strings.IndexByte(",}] \t\r\n", s.b[s.i]) < 0 {
					s.i++
				}
				return s.i < len(s.b)
			}
			s.i++
		}
		if depth == 0 { // a string, an object or an array ended
			return s.i < len(s.b)
		}
	}
	return false
}

// ReadInput reads one event from r until it ends, MaxEvent+1 bytes, or ctx
// is done; then it returns what it read so far with ErrIncomplete (the read
// goes on in the background until r ends; a hook process exits).
func ReadInput(ctx context.Context, r io.Reader) ([]byte, error) {
	var (
		mu   sync.Mutex
		buf  []byte
		done = make(chan error, 1)
	)
	go func() {
		chunk := make([]byte, 64<<10)
		for {
			n, err := r.Read(chunk)
			mu.Lock()
			buf = append(buf, chunk[:n]...)
			full := len(buf) > MaxEvent
			mu.Unlock()
			if err == io.EOF || full {
				done <- nil
				return
			}
			if err != nil {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		mu.Lock()
		defer mu.Unlock()
		return buf, err
	case <-ctx.Done():
		mu.Lock()
		defer mu.Unlock()
		return bytes.Clone(buf), fmt.Errorf("%w: %d bytes read, the input did not end in time (--timeout)", ErrIncomplete, len(buf))
	}
}

// MaxEvent bounds one event's JSON (16 MiB).
const MaxEvent = 16 << 20
