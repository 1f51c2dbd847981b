package hook

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/attune-dev/attune/harness"
)

// ListenOptions are `attune hook serve DIALECT`'s.
type ListenOptions struct {
	// Listen is the address (checked by CheckListen first).
	Listen string
	// Config is --config ("": harness.FindConfig's search).
	Config string
	// Stderr hears where serve answers and what goes wrong.
	Stderr io.Writer
	// ServeOptions bound the serving; the Token is the configuration's
	// (LoadToken).
	ServeOptions
}

// ListenAndServe is `attune hook serve`: it finds the configuration, loads
// its token (LoadToken, beside the configuration), opens a warm runtime and
// answers on o.Listen until ctx is done.
func ListenAndServe(ctx context.Context, d harness.Dialect, o ListenOptions) error {
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	cwd, _ := os.Getwd()
	path, err := harness.FindConfig(o.Config, os.Getenv, os.Getenv("CLAUDE_PROJECT_DIR"), cwd)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if o.Token, err = LoadToken(filepath.Dir(abs)); err != nil {
		return err
	}
	rt, err := harness.Open(ctx, path, harness.Options{Warm: true, Stderr: o.Stderr})
	if err != nil {
		return err
	}
	defer rt.Close()
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Stderr, "attune hook serve %s: answering on http://%s%s (requests carry the %s header of %s)\n", d.Name(), ln.Addr(), HTTPPath, TokenHeader, TokenFile(filepath.Dir(abs)))
	return Serve(ctx, rt, ln, d, o.ServeOptions)
}

// CheckListen refuses a listen address that is not loopback unless
// anyAddr: the hook server answers for the agent's permissions, so by
// default only the local machine may reach it.
func CheckListen(addr string, anyAddr bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %s: want HOST:PORT (%v)", addr, err)
	}
	if anyAddr {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--listen %s: not a loopback address; hook answers decide what the agent may run, so attune listens on 127.0.0.1 or ::1 unless --listen-any is given", addr)
}

// TokenHeader carries the per-install secret of `hook serve`: a request
// without the right one is answered 401.
const TokenHeader = "X-Attune-Token"

// TokenFile is where the secret of `hook serve` for the configuration in
// configDir lives: .attune/hook-token beside the configuration (the folder
// of the default store), mode 0600 in a folder of mode 0700.
func TokenFile(configDir string) string {
	return filepath.Join(configDir, ".attune", "hook-token")
}

// LoadToken returns the secret of `hook serve` for the configuration in
// configDir, creating it (32 random bytes, hex) when there is none: `hook
// install --http` writes it into the agent's http hook entry as
// TokenHeader, `hook serve` requires it. A token file another user owns or
// others may read is refused.
func LoadToken(configDir string) (string, error) {
	name := TokenFile(configDir)
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return "", fmt.Errorf("hook token: %w", err)
	}
	for range 3 {
		data, err := os.ReadFile(name)
		if err == nil {
			if err := privateFile(name); err != nil {
				return "", err
			}
			tok := strings.TrimSpace(string(data))
			if len(tok) < 32 {
				return "", fmt.Errorf("hook token: %s holds no token (%d bytes); remove it, and run attune hook install --http again", name, len(tok))
			}
			return tok, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("hook token: %w", err)
		}
		var raw [32]byte
		if _, err := rand.Read(raw[:]); err != nil {
			return "", fmt.Errorf("hook token: %w", err)
		}
		// written whole under another name, then linked to its own: a
		// reader never sees half a token, two creators agree on the first
		tmp, err := os.CreateTemp(filepath.Dir(name), ".hook-token-*")
		if err != nil {
			return "", fmt.Errorf("hook token: %w", err)
		}
		_, werr := tmp.WriteString(hex.EncodeToString(raw[:]) + "\n")
		if cerr := tmp.Close(); werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Link(tmp.Name(), name)
		}
		os.Remove(tmp.Name())
		if werr != nil && !errors.Is(werr, fs.ErrExist) {
			return "", fmt.Errorf("hook token: %w", werr)
		}
	}
	return "", fmt.Errorf("hook token: %s could not be created", name)
}

// privateFile refuses a secret's file that others may read or that another
// user owns.
func privateFile(name string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	st, err := os.Lstat(name)
	if err != nil {
		return fmt.Errorf("hook token: %w", err)
	}
	if uid, ok := harness.FileOwner(st); ok && uid != os.Getuid() {
		return fmt.Errorf("hook token: %s belongs to user %d, not to this user; remove it and run attune hook install --http again", name, uid)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("hook token: %s has mode %v, open to other users; remove it and run attune hook install --http again (a new token)", name, st.Mode())
	}
	return nil
}

// ServeOptions bound `hook serve`. Zero values take the defaults.
type ServeOptions struct {
	// Timeout bounds one event, reading its body included (DefaultTimeout).
	Timeout time.Duration
	// Token is the secret every request carries as TokenHeader; "" answers
	// every request 401.
	Token string
	// MaxConns bounds the connections served at once (DefaultMaxConns).
	// Past it a connection is still answered, at once and without the
	// engine: a tool call is denied (the server is full), anything else
	// gets no decision; past twice it, a connection is closed.
	MaxConns int
	// MaxBody bounds one event's body (MaxEvent); a larger tool call is
	// denied.
	MaxBody int64
	// DecodeBudget bounds the bytes of the events read and judged at once
	// (DefaultDecodeBudget): a decoded event costs some 25 times its
	// bytes. An event that cannot get its share within Timeout is a tool
	// call denied.
	DecodeBudget int64
	// MaxWarm bounds the sessions kept warm (DefaultMaxWarm); past it the
	// least recently used is stopped, its lock and reach files removed.
	MaxWarm int
	// WarmIdle is how long a warm session stays without an event
	// (DefaultWarmIdle).
	WarmIdle time.Duration
}

// Defaults of ServeOptions.
const (
	DefaultMaxConns     = 64
	DefaultDecodeBudget = harness.MaxEvent
	DefaultMaxWarm      = 64
	DefaultWarmIdle     = 30 * time.Minute
	// headerTimeout bounds reading a request's headers; idleTimeout how
	// long a kept-alive connection may wait for its next request.
	headerTimeout = 5 * time.Second
	idleTimeout   = 60 * time.Second
	// overflowRead is how much of an event a connection past MaxConns may
	// send, and how long it has: enough for the event's name.
	overflowRead = 64 << 10
	overflowTime = 2 * time.Second
)

func (o ServeOptions) norm() ServeOptions {
	if o.Timeout <= 0 {
		o.Timeout = harness.DefaultTimeout
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.MaxBody <= 0 || o.MaxBody > harness.MaxEvent {
		o.MaxBody = harness.MaxEvent
	}
	if o.DecodeBudget <= 0 {
		o.DecodeBudget = DefaultDecodeBudget
	}
	if o.MaxWarm <= 0 {
		o.MaxWarm = DefaultMaxWarm
	}
	if o.WarmIdle <= 0 {
		o.WarmIdle = DefaultWarmIdle
	}
	return o
}

// server is one `hook serve`: its options, its decode budget and the
// connections it holds.
type server struct {
	r      *harness.Runtime
	d      harness.Dialect
	o      ServeOptions
	decode *semaphore.Weighted
}

type overflowKey struct{}

// Handler answers the agent's http hooks: each POST carries one event as
// JSON and gets the answer as JSON (status 200), the same as the command
// hook's stdin and stdout. Events of one session are serialized as for
// command hooks; instances stay warm between events when the runtime was
// opened with Options.Warm.
//
// A request is refused before its body is read unless it comes as a
// harness sends it: 403 for a Host header that is not this loopback
// server's (DNS rebinding) or an Origin that is not loopback (a web page),
// 401 without the token, 415 for a Content-Type other than
// application/json (a page's no-preflight POST), 405 for a method other
// than POST. See doc.go for the threat model.
func Handler(r *harness.Runtime, d harness.Dialect, o ServeOptions) http.Handler {
	o = o.norm()
	s := &server{r: r, d: d, o: o, decode: semaphore.NewWeighted(o.DecodeBudget)}
	return s
}

// Serve answers on ln until ctx is done, with the timeouts, the connection
// cap and the eviction of warm sessions of o.
func Serve(ctx context.Context, r *harness.Runtime, ln net.Listener, d harness.Dialect, o ServeOptions) error {
	o = o.norm()
	h := Handler(r, d, o)
	capped := &capListener{Listener: ln, max: int64(o.MaxConns)}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: headerTimeout,
		ReadTimeout:       o.Timeout,
		WriteTimeout:      o.Timeout + headerTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if cc, ok := c.(*capConn); ok && cc.over {
				return context.WithValue(ctx, overflowKey{}, true)
			}
			return ctx
		},
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(min(o.WarmIdle/4, time.Minute))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				srv.Close()
				return
			case <-stop:
				return
			case <-tick.C:
				r.EvictWarm(ctx, o.MaxWarm, o.WarmIdle)
			}
		}
	}()
	err := srv.Serve(capped)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if code, why := s.refuse(req); code != 0 {
		http.Error(w, "attune hook serve: "+why, code)
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), s.o.Timeout)
	defer cancel()
	w.Header().Set("Content-Type", "application/json")
	r := harness.Responder{Dialect: s.d, Answer: func(ctx context.Context, ev harness.Event) harness.Answer { return s.r.Handle(ctx, s.d, ev) },
		Log: s.r.Log(), Who: "attune hook serve " + s.d.Name(), Timeout: s.o.Timeout, Go: s.r.Go}
	if req.Context().Value(overflowKey{}) != nil {
		// past the connection cap: answer from the event's start, at once
		w.Header().Set("Connection", "close")
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(overflowTime))
		data, _ := io.ReadAll(io.LimitReader(req.Body, overflowRead))
		w.Write(r.Respond(ctx, data, fmt.Errorf("attune hook serve is serving %d connections, its most (--max-conns); this event was not judged", s.o.MaxConns)))
		return
	}
	// the decode budget: this event's share of the bytes read and judged
	// at once, taken before its body is read
	n := req.ContentLength
	if n < 0 || n > s.o.MaxBody {
		n = s.o.MaxBody
	}
	n = min(max(n, 4<<10), s.o.DecodeBudget)
	wctx, wcancel := context.WithTimeout(ctx, s.o.Timeout/2) // leave half to judge it
	err := s.decode.Acquire(wctx, n)
	wcancel()
	if err != nil {
		data, _ := io.ReadAll(io.LimitReader(req.Body, overflowRead))
		w.Write(r.Respond(ctx, data, fmt.Errorf("attune hook serve: no room to read the event within %s (the decode budget is %d bytes, taken by events read at once)", s.o.Timeout/2, s.o.DecodeBudget)))
		return
	}
	defer s.decode.Release(n)
	var body io.Reader = io.LimitReader(req.Body, s.o.MaxBody+1)
	if req.ContentLength > s.o.MaxBody {
		body = io.LimitReader(req.Body, overflowRead) // its name is at the start
	}
	data, err := io.ReadAll(body)
	switch {
	case err != nil:
		err = fmt.Errorf("%w: %v", harness.ErrIncomplete, err)
	case req.ContentLength > s.o.MaxBody || int64(len(data)) > s.o.MaxBody:
		err = fmt.Errorf("%w: the event is larger than %d bytes", harness.ErrBadEvent, s.o.MaxBody)
	}
	w.Write(r.Respond(ctx, data, err))
	if s.r.WarmCount() > s.o.MaxWarm {
		s.r.EvictWarm(context.WithoutCancel(ctx), s.o.MaxWarm, s.o.WarmIdle)
	}
}

// refuse checks a request before its body is read: its Host (loopback and
// this server's port, or this server's own address: a DNS name that
// resolves here is a rebinding page's), its Origin (none, or loopback),
// its token, its method and its Content-Type.
func (s *server) refuse(req *http.Request) (int, string) {
	local, _ := req.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !hostAllowed(req.Host, local) {
		return http.StatusForbidden, fmt.Sprintf("Host %q is not this server's loopback address (want 127.0.0.1:PORT, localhost:PORT or [::1]:PORT)", req.Host)
	}
	if o := req.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
		return http.StatusForbidden, fmt.Sprintf("Origin %q is not loopback: hook events come from the agent, not from web pages", o)
	}
	got := req.Header.Get(TokenHeader)
	if s.o.Token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(s.o.Token)) != 1 {
		return http.StatusUnauthorized, "missing or wrong " + TokenHeader + " header; the hook entry carries it (attune hook install --http)"
	}
	if req.Method != http.MethodPost {
		return http.StatusMethodNotAllowed, "POST one hook event as JSON"
	}
	if mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return http.StatusUnsupportedMediaType, "the event must be sent as Content-Type: application/json"
	}
	return 0, ""
}

// hostAllowed: a Host header naming a loopback address (localhost, any
// loopback IP) or the address the request came in on, with this server's
// port.
func hostAllowed(host string, local net.Addr) bool {
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		h, port = strings.Trim(host, "[]"), "80"
	}
	var lip net.IP
	lport := ""
	if ta, ok := local.(*net.TCPAddr); ok {
		lip, lport = ta.IP, strconv.Itoa(ta.Port)
	}
	if lport != "" && port != lport {
		return false
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && (ip.IsLoopback() || lip != nil && ip.Equal(lip) && !lip.IsUnspecified())
}

// loopbackOrigin: an Origin of a page served from this machine's loopback.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// capListener counts the connections it has open: past max a connection
// is marked over (answered at once, see ServeHTTP), past twice max it is
// closed.
type capListener struct {
	net.Listener
	max    int64
	active atomic.Int64
}

type capConn struct {
	net.Conn
	over bool
	ln   *capListener
	once sync.Once
}

func (c *capConn) Close() error {
	c.once.Do(func() { c.ln.active.Add(-1) })
	return c.Conn.Close()
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		n := l.active.Add(1)
		if n > 2*l.max {
			l.active.Add(-1)
			c.Close()
			continue
		}
		return &capConn{Conn: c, over: n > l.max, ln: l}, nil
	}
}
