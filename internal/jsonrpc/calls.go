package jsonrpc

import (
	"strconv"
	"sync"
)

// Calls is the table of the calls this side sent its peer and awaits the
// answers of, by the id each was sent under (1, 2, ...: the ids are this
// side's own). T is what the caller keeps of one call (a channel its
// answer goes to, most often). Safe for concurrent use.
type Calls[T any] struct {
	mu     sync.Mutex
	next   int64
	m      map[int64]T
	closed bool
}

// Add records a call and returns its id; false once the table is closed
// (the peer is gone: no call is sent).
func (c *Calls[T]) Add(v T) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, false
	}
	if c.m == nil {
		c.m = map[int64]T{}
	}
	c.next++
	c.m[c.next] = v
	return c.next, true
}

// Take removes the call id and returns it; false when none waits under
// that id (answered already, given up, or never sent).
func (c *Calls[T]) Take(id int64) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[id]
	delete(c.m, id)
	return v, ok
}

// Waits reports whether call id awaits its answer.
func (c *Calls[T]) Waits(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[id]
	return ok
}

// Sent reports whether a call was ever sent under id (an answer to it
// after it was given up is late, not unknown).
func (c *Calls[T]) Sent(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return id > 0 && id <= c.next
}

// TakeIf removes and returns the calls for which f reports true; f runs
// under the table's lock (it must not call the table).
func (c *Calls[T]) TakeIf(f func(id int64, v T) bool) []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []T
	for id, v := range c.m {
		if f(id, v) {
			out = append(out, v)
			delete(c.m, id)
		}
	}
	return out
}

// IDs are the ids of the calls awaiting their answers.
func (c *Calls[T]) IDs() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]int64, 0, len(c.m))
	for id := range c.m {
		out = append(out, id)
	}
	return out
}

// Close refuses new calls and removes and returns every call waiting.
func (c *Calls[T]) Close() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	out := make([]T, 0, len(c.m))
	for _, v := range c.m {
		out = append(out, v)
	}
	c.m = nil
	return out
}

// ParseCallID reads the id of an answer as one of the table's ids written
// with prefix (a JSON string "e12" for prefix "e", a number 12 for ""); false
// for any other id.
func ParseCallID(raw []byte, prefix string) (int64, bool) {
	s := string(raw)
	if prefix != "" {
		if len(s) < 2+len(prefix) || s[0] != '"' || s[len(s)-1] != '"' || s[1:1+len(prefix)] != prefix {
			return 0, false
		}
		s = s[1+len(prefix) : len(s)-1]
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 && s[0] != '+' {
		return n, true
	}
	if prefix != "" || s == "" || s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	// a number this side wrote as 12, read back by the peer as 12.0 or 1.2e1
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != float64(int64(f)) || f > 1<<53 {
		return 0, false
	}
	return int64(f), true
}
