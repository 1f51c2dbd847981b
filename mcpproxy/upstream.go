package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	wire "github.com/attune-dev/attune/internal/jsonrpc"
)

// Upstream names one upstream MCP server and the command that runs it.
type Upstream struct {
	Name    string
	Command []string
}

// Errors a host may act on (errors.Is).
var (
	// ErrTimeout: the upstream did not answer within call_timeout (or
	// start_timeout, for initialize).
	ErrTimeout = errors.New("the upstream did not answer in time")
	// ErrUpstreamGone: the upstream exited or closed its output.
	ErrUpstreamGone = errors.New("the upstream is gone")
)

// UpstreamError is a failure of one request to one upstream.
type UpstreamError struct {
	Upstream string
	Method   string
	Err      error
}

func (e *UpstreamError) Error() string {
	return fmt.Sprintf("upstream %s, %s: %v", e.Upstream, e.Method, e.Err)
}

func (e *UpstreamError) Unwrap() error { return e.Err }

// pending is a request sent and not yet answered. relay, when set, gets
// the answer first, in the read loop, so that what the upstream sends after
// it reaches the client after it too; it reports whether it sent it on.
type pending struct {
	ch      chan *response
	relay   func(*response) bool
	relayed bool
	// early, when set, sees the answer in the read loop before the caller
	// gets it, which it still does (callEarly)
	early    func(*response)
	bad      *BadMessageError // the answer was a line that is not JSON-RPC
	deadline time.Time        // when the request times out
	timedOut bool             // the deadline passed first (expire)
	until    bool             // deadline is the caller's (callUntil), not call_timeout
}

// errRelayed: the answer went to the client as the upstream sent it.
var errRelayed = errors.New("relayed")

// upstream is one running upstream server.
type upstream struct {
	name    string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stdout  io.Closer // closed when the read loop ends
	conn    *conn
	timeout time.Duration // call_timeout
	start   time.Duration // start_timeout, for initialize
	log     func(format string, args ...any)
	// onRequest and onNotify receive what the upstream sends on its own.
	onRequest func(u *upstream, req *request)
	onNotify  func(u *upstream, req *request)

	calls wire.Calls[*pending] // requests sent, awaiting answers
	mu    sync.Mutex
	gone  error           // set once the upstream's output ended
	done  chan struct{}   // closed when the read loop ends
	init  json.RawMessage // the answer to initialize
	// One timer per upstream times out its requests (expire), set for
	// the earliest deadline of those pending when it was set; a request
	// costs a clock read, not a timer of its own: a timer per request put
	// the runtime's timer heap, with its locks, on every call's path.
	timer   *time.Timer
	timerAt time.Time // when timer fires; zero when it is not set
}

// start runs the upstream's command and its read loop.
func startUpstream(u Upstream, timeout, start time.Duration, maxMessage int, stderr io.Writer, log func(string, ...any)) (*upstream, error) {
	if len(u.Command) == 0 {
		return nil, fmt.Errorf("upstream %s: no command", u.Name)
	}
	cmd := exec.Command(u.Command[0], u.Command[1:]...)
	cmd.Stderr = stderr
	// pipes of the proxy's own (os.Pipe: non-blocking, the poller waits
	// on them), read and written with raw system calls (rawio_unix.go)
	childIn, stdin, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdout, childOut, err := os.Pipe()
	if err != nil {
		childIn.Close()
		stdin.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = childIn, childOut
	err = cmd.Start()
	childIn.Close() // the child has its own copies
	childOut.Close()
	if err != nil {
		stdin.Close()
		stdout.Close()
		return nil, fmt.Errorf("upstream %s: cannot start %q: %w", u.Name, u.Command[0], err)
	}
	up := &upstream{
		name: u.Name, cmd: cmd, stdin: stdin, stdout: stdout, timeout: timeout, start: start, log: log,
		conn: newConn(rawReader(stdout), rawWriter(stdin), maxMessage),
		done: make(chan struct{}),
	}
	return up, nil
}

// run reads the upstream's messages until its output ends.
func (u *upstream) run() {
	defer close(u.done)
	if u.stdout != nil {
		defer u.stdout.Close()
	}
	for {
		msg, err := u.conn.read()
		var bad *BadMessageError
		switch {
		case errors.As(err, &bad):
			u.badMessage(bad)
			continue
		case err != nil:
			u.exit(err)
			return
		}
		switch m := msg.(type) {
		case *response:
			u.deliver(m)
		case *request:
			if m.isCall() {
				u.onRequest(u, m)
			} else {
				u.onNotify(u, m)
			}
		}
	}
}

// badMessage fails the request a bad line answers, or when its id cannot
// be found, every pending request: the answer they wait for may be lost.
func (u *upstream) badMessage(bad *BadMessageError) {
	u.log("upstream %s sent %v", u.name, bad)
	if n, ok := callID(bad.ID); ok && u.calls.Waits(n) {
		u.fail(n, bad)
		return
	}
	for _, id := range u.calls.IDs() {
		u.fail(id, bad)
	}
}

// deliver hands an answer to its request.
func (u *upstream) deliver(r *response) {
	n, ok := callID(r.ID)
	if !ok {
		u.log("upstream %s answered request %s, which the proxy never sent", u.name, r.ID)
		return
	}
	pd := u.take(n)
	if pd == nil {
		if !u.calls.Sent(n) {
			u.log("upstream %s answered request %d, which the proxy never sent", u.name, n)
		}
		return // else answered after a timeout or a cancellation
	}
	if pd.relay != nil {
		pd.relayed = pd.relay(r)
	}
	if pd.early != nil {
		pd.early(r)
	}
	pd.ch <- r
}

// fail ends a pending request with the bad line that stands for its answer.
func (u *upstream) fail(n int64, bad *BadMessageError) {
	if pd := u.take(n); pd != nil {
		pd.bad = bad
		pd.ch <- &response{ID: intID(n)}
	}
}

// take removes a pending request; nil when none waits under that id.
func (u *upstream) take(n int64) *pending {
	pd, _ := u.calls.Take(n)
	return pd
}

// exit marks the upstream gone and fails every pending request.
func (u *upstream) exit(readErr error) {
	// the process has closed its output: wait briefly for its status
	status := make(chan error, 1)
	go func() { status <- u.cmd.Wait() }()
	why := "closed its output"
	select {
	case err := <-status:
		if err != nil {
			why = "exited (" + err.Error() + ")"
		} else {
			why = "exited"
		}
	case <-time.After(2 * time.Second):
	}
	if readErr != nil && !errors.Is(readErr, io.EOF) {
		why += ": " + readErr.Error()
	}
	u.mu.Lock()
	u.gone = fmt.Errorf("%w: %s %s", ErrUpstreamGone, u.name, why)
	pend := u.calls.Close()
	if u.timer != nil {
		u.timer.Stop()
		u.timerAt = time.Time{}
	}
	u.mu.Unlock()
	for _, pd := range pend {
		pd.ch <- nil
	}
}

// call sends one request and waits for its answer, at most the call
// timeout; a context done or a timeout sends notifications/cancelled.
func (u *upstream) call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return u.callRelay(ctx, method, params, nil)
}

// callRelay is call with a relay: when relay takes the answer, the result
// is errRelayed.
func (u *upstream) callRelay(ctx context.Context, method string, params json.RawMessage, relay func(*response) bool) (json.RawMessage, error) {
	return u.callUntil(ctx, time.Time{}, method, params, relay)
}

// callUntil is callRelay that also ends at until (when not zero) with
// context.DeadlineExceeded: a tool chain's core passes the deadline of
// the engine's ctx here, and the client's request ctx as ctx, so that
// the engine's ctx, whose timer is made only when someone waits on it,
// needs none (the upstream's one timer serves both).
func (u *upstream) callUntil(ctx context.Context, until time.Time, method string, params json.RawMessage, relay func(*response) bool) (json.RawMessage, error) {
	return u.callEarly(ctx, until, method, params, relay, nil)
}

// callEarly is callUntil with early, which sees the answer in the read
// loop, before the caller is woken with it: what it sends the client is
// not held up by that hand-over (tools.go, answerEarly).
func (u *upstream) callEarly(ctx context.Context, until time.Time, method string, params json.RawMessage, relay func(*response) bool, early func(*response)) (json.RawMessage, error) {
	fail := func(err error) (json.RawMessage, error) {
		return nil, &UpstreamError{Upstream: u.name, Method: method, Err: err}
	}
	pd := &pending{ch: make(chan *response, 1), relay: relay, early: early}
	wait, key := u.timeout, "call_timeout"
	if method == "initialize" {
		wait, key = u.start, "start_timeout"
	}
	pd.deadline = time.Now().Add(wait)
	if !until.IsZero() && until.Before(pd.deadline) {
		pd.deadline, pd.until = until, true
	}
	id, ok := u.calls.Add(pd)
	if !ok { // the upstream is gone: the table was closed
		u.mu.Lock()
		err := u.gone
		u.mu.Unlock()
		return fail(err)
	}
	u.mu.Lock()
	u.armLocked(pd.deadline)
	u.mu.Unlock()
	if err := u.conn.write(&request{n: id, Method: method, Params: params}); err != nil {
		_ = u.forget(id)
		return fail(fmt.Errorf("%w: %s cannot be written to: %v", ErrUpstreamGone, u.name, err))
	}
	var r *response
	select {
	case r = <-pd.ch:
	case <-ctx.Done():
		if u.forget(id) {
			u.cancel(id, "cancelled by the client")
			return fail(ctx.Err())
		}
		r = <-pd.ch
	}
	if r == nil && pd.timedOut && pd.until {
		return fail(context.DeadlineExceeded)
	}
	if r == nil && pd.timedOut {
		return fail(fmt.Errorf("%w (%s %s in [harness.mcp])", ErrTimeout, key, wait))
	}
	if r == nil {
		u.mu.Lock()
		err := u.gone
		u.mu.Unlock()
		return fail(err)
	}
	if pd.bad != nil {
		return fail(fmt.Errorf("it sent %w", pd.bad))
	}
	if pd.relayed {
		return nil, errRelayed
	}
	if r.Error != nil {
		return nil, &UpstreamError{Upstream: u.name, Method: method, Err: r.Error}
	}
	return r.Result, nil
}

// armLocked has the timer fire at the latest at deadline; u.mu is held.
func (u *upstream) armLocked(deadline time.Time) {
	if !u.timerAt.IsZero() && !deadline.Before(u.timerAt) {
		return // it fires first, and is set again for what is left
	}
	u.timerAt = deadline
	if u.timer == nil {
		u.timer = time.AfterFunc(time.Until(deadline), u.expire)
	} else {
		u.timer.Reset(time.Until(deadline))
	}
}

// expire times out the pending requests whose deadline passed, with
// notifications/cancelled to the upstream, and sets the timer again for
// the earliest deadline left.
func (u *upstream) expire() {
	now := time.Now()
	var late []int64
	var next time.Time // the earliest deadline left
	u.mu.Lock()
	u.timerAt = time.Time{}
	u.mu.Unlock()
	for _, pd := range u.calls.TakeIf(func(id int64, pd *pending) bool {
		if !pd.deadline.After(now) {
			late = append(late, id)
			return true
		}
		if next.IsZero() || pd.deadline.Before(next) {
			next = pd.deadline
		}
		return false
	}) {
		pd.timedOut = true
		pd.ch <- nil // buffered, and only the one who took it from the table sends
	}
	if !next.IsZero() {
		u.mu.Lock()
		u.armLocked(next)
		u.mu.Unlock()
	}
	for _, id := range late {
		u.cancel(id, "timed out")
	}
}

// forget drops a pending request; false when its answer was taken already.
func (u *upstream) forget(id int64) bool {
	_, ok := u.calls.Take(id)
	return ok
}

func (u *upstream) cancel(id int64, reason string) {
	p, _ := json.Marshal(map[string]any{"requestId": id, "reason": reason})
	_ = u.notify("notifications/cancelled", p)
}

// notify sends a notification; an upstream that is gone drops it.
func (u *upstream) notify(method string, params json.RawMessage) error {
	u.mu.Lock()
	gone := u.gone
	u.mu.Unlock()
	if gone != nil {
		return gone
	}
	return u.conn.write(&request{Method: method, Params: params})
}

// respond answers a request the upstream sent.
func (u *upstream) respond(r *response) { _ = u.conn.write(r) }

func (u *upstream) setInit(raw json.RawMessage) {
	u.mu.Lock()
	u.init = raw
	u.mu.Unlock()
}

// initResult is the upstream's answer to initialize; nil before it.
func (u *upstream) initResult() json.RawMessage {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.init
}

// alive reports whether the upstream still runs.
func (u *upstream) alive() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.gone == nil
}

// close ends the upstream as the MCP stdio transport says: close its
// input, wait, then SIGTERM, then SIGKILL.
func (u *upstream) close(grace time.Duration) {
	_ = u.stdin.Close()
	select {
	case <-u.done:
		return
	case <-time.After(grace):
	}
	_ = u.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-u.done:
		return
	case <-time.After(grace):
	}
	_ = u.cmd.Process.Kill()
	select {
	case <-u.done:
	case <-time.After(grace): // a child of the upstream may hold its output open
	}
}
