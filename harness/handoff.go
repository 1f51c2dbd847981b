package harness

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/attune-dev/attune/behaviors"
	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/internal/jsonscan"
)

// The warm hand-off. A hook process pays for its start, the store's open
// and the instance's bring-back on every event; a warm server pays once.
// When `attune hook serve --socket` runs for a configuration, each
// `attune hook DIALECT` of that configuration forwards its event to it on
// a Unix socket and prints the server's answer; when the configuration
// says [harness] warm = true, the first event that finds no server starts
// one (and is itself answered in-process).
//
// The socket is the user's and the configuration's: WarmSocket, in the
// user's runtime folder (userRuntimeDir: $XDG_RUNTIME_DIR/attune, else the
// user's cache folder), named after the configuration file's absolute
// path. The hand-off never fails open: the event is answered in-process,
// exactly as without a server, whenever
//
//   - there is no socket, or it is stale (nothing listens: a server that
//     died left its file);
//   - the folder is not the user's own with mode 0700, the socket file is
//     not a socket of the user's, or (Linux) the process at the other end
//     runs as another user: a socket another user planted could answer
//     allow to everything;
//   - the server answers for another configuration: its identity
//     (Identity: the attune version, the configuration file's path and
//     bytes, every file of its packs) differs from the one the event's
//     process computes now (a server started before the packs changed);
//   - the answer does not arrive whole within HandoffTimeout (or a quarter
//     of what the event has left, when less): a slow server, or one killed
//     while answering. The server may have judged the event all the same,
//     so a guard can run twice for it; the answer printed is the
//     in-process one.
//
// The protocol is one request per connection: a header line of JSON
// (warmRequest), the event as the dialect read it (Event, as JSON), the
// write side closed; the answer is a header line (warmReply, with the size
// of what follows) and the Answer as JSON, which the hook process renders
// as it renders its own. Both are plain data (what the dialect decoded,
// what the engine returned), which JSON carries unchanged.

// HandoffTimeout bounds one hand-off: connecting, sending the event and
// reading the whole answer.
const HandoffTimeout = 2 * time.Second

// WarmIdle is how long a warm server started by an event ([harness] warm)
// waits for the next event before it exits.
const WarmIdle = 30 * time.Minute

// warmVersion is the hand-off protocol's version.
const warmVersion = 1

// Errors of the hand-off a caller may act on (errors.Is).
var (
	// ErrNoWarm: no warm server listens for this configuration (no socket,
	// or a stale one).
	ErrNoWarm = errors.New("no warm server")
	// ErrWarmRefused: a server listens but may not answer: the socket or
	// its folder is not this user's own, or the server answers for
	// another configuration or identity.
	ErrWarmRefused = errors.New("warm server refused")
	// ErrWarmRunning: a warm server already answers for the configuration.
	ErrWarmRunning = errors.New("a warm server already answers for this configuration")
)

type warmRequest struct {
	V       int    `json:"v"`
	Dialect string `json:"dialect"`
	Config  string `json:"config"`
	Ident   string `json:"ident"`
}

type warmReply struct {
	OK    bool   `json:"ok"`
	Why   string `json:"why,omitempty"`
	Ident string `json:"ident,omitempty"`
	Size  int    `json:"size"`
}

// WarmSocket is the socket of this user's warm server for the
// configuration file cfgFile.
func WarmSocket(cfgFile string) string {
	abs, err := filepath.Abs(cfgFile)
	if err != nil {
		abs = cfgFile
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(userRuntimeDir(os.Getenv), "warm-"+hex.EncodeToString(sum[:8])+".sock")
}

// Identity is what a warm server answers for: the attune build (the
// engine's version, the Go it was built with, the names and sizes of its
// own pack's files), the configuration file's absolute path and bytes, and
// the path and bytes of every file in its packs.
func Identity(cfg *config.Config) (string, error) {
	if cfg.File == "" {
		return "", errors.New("warm hand-off: the configuration has no file")
	}
	h := sha256.New()
	var num []byte
	put := func(s string) {
		num = append(strconv.AppendInt(num[:0], int64(len(s)), 10), ':')
		h.Write(num)
		io.WriteString(h, s)
	}
	put(strconv.Itoa(warmVersion))
	put(engine.Version)
	put(runtime.Version())
	// the engine's own pack, as this build embeds it (names and sizes:
	// reading it whole would cost more than the hand-off saves)
	_ = fs.WalkDir(behaviors.FS, ".", func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if fi, err := e.Info(); err == nil {
				put(p + "\x00" + strconv.FormatInt(fi.Size(), 10))
			}
		}
		return nil
	})
	abs, err := filepath.Abs(cfg.File)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return "", err
	}
	put(abs)
	put(string(data))
	for _, dir := range cfg.Engine.Packs {
		put(dir)
		var files []string
		err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if e.Type().IsRegular() {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return "", err
		}
		sort.Strings(files)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return "", err
			}
			put(f)
			put(string(b))
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// privateSocket checks the warm socket's folder (a folder of this user's,
// mode 0700, not a link) and the socket (a socket of this user's) before
// anything is sent on it. A missing one is ErrNoWarm.
func privateSocket(path string) error {
	if runtime.GOOS == "windows" {
		return fmt.Errorf("%w: the warm hand-off runs on Unix only", ErrNoWarm)
	}
	// no socket, no server: said before the folder is judged, so that a
	// folder of the wrong mode that holds no socket costs no warning
	sock, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return ErrNoWarm
	}
	dir := filepath.Dir(path)
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNoWarm
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrWarmRefused, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%w: %s is not a folder (a link?)", ErrWarmRefused, dir)
	}
	if uid, ok := FileOwner(st); !ok || uid != os.Getuid() {
		return fmt.Errorf("%w: %s belongs to user %d, not to this user (%d)", ErrWarmRefused, dir, uid, os.Getuid())
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%w: %s has mode %04o, open to other users; run chmod 700 %s", ErrWarmRefused, dir, st.Mode().Perm(), dir)
	}
	if sock == nil {
		return fmt.Errorf("%w: %s cannot be read", ErrWarmRefused, path)
	}
	st = sock
	if st.Mode()&fs.ModeSocket == 0 {
		return fmt.Errorf("%w: %s is not a socket", ErrWarmRefused, path)
	}
	if uid, ok := FileOwner(st); !ok || uid != os.Getuid() {
		return fmt.Errorf("%w: %s belongs to user %d, not to this user (%d)", ErrWarmRefused, path, uid, os.Getuid())
	}
	return nil
}

// HandOff sends one event to the warm server for cfg and returns the
// server's answer within timeout. Any error means: answer in-process.
func HandOff(ctx context.Context, cfg *config.Config, d Dialect, ev Event, timeout time.Duration) (Answer, error) {
	path := WarmSocket(cfg.File)
	if err := privateSocket(path); err != nil {
		return Answer{}, err
	}
	ident, err := Identity(cfg)
	if err != nil {
		return Answer{}, fmt.Errorf("%w: %v", ErrWarmRefused, err)
	}
	event, err := eventJSON(ev)
	if err != nil {
		return Answer{}, fmt.Errorf("%w: the event does not encode: %v", ErrWarmRefused, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl)/4)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var dialer net.Dialer
	c, err := dialer.DialContext(ctx, "unix", path)
	if err != nil {
		if ctx.Err() != nil {
			return Answer{}, fmt.Errorf("warm server: %w", err)
		}
		return Answer{}, fmt.Errorf("%w: %v", ErrNoWarm, err)
	}
	defer c.Close()
	uc := c.(*net.UnixConn)
	dl, _ := ctx.Deadline()
	_ = uc.SetDeadline(dl)
	if uid, ok := peerUID(uc); ok && uid != os.Getuid() {
		return Answer{}, fmt.Errorf("%w: the process at %s runs as user %d, not as this user (%d)", ErrWarmRefused, path, uid, os.Getuid())
	}
	abs, _ := filepath.Abs(cfg.File)
	head := requestJSON(warmRequest{V: warmVersion, Dialect: d.Name(), Config: abs, Ident: ident})
	msg := make([]byte, 0, len(head)+1+len(event))
	msg = append(append(append(msg, head...), '\n'), event...)
	if _, err := uc.Write(msg); err != nil {
		return Answer{}, fmt.Errorf("warm server: %w", err)
	}
	_ = uc.CloseWrite()
	br := bufio.NewReader(uc)
	line, err := br.ReadSlice('\n')
	if err != nil {
		return Answer{}, fmt.Errorf("warm server: no answer: %w", err)
	}
	rep, err := readReply(line)
	if err != nil {
		return Answer{}, fmt.Errorf("warm server: a bad answer: %v", err)
	}
	if !rep.OK {
		return Answer{}, fmt.Errorf("%w: %s", ErrWarmRefused, rep.Why)
	}
	if rep.Ident != ident {
		return Answer{}, fmt.Errorf("%w: it answers for another configuration", ErrWarmRefused)
	}
	if rep.Size <= 0 || rep.Size > MaxEvent {
		return Answer{}, fmt.Errorf("warm server: an answer of %d bytes", rep.Size)
	}
	out := make([]byte, rep.Size)
	if _, err := io.ReadFull(br, out); err != nil {
		return Answer{}, fmt.Errorf("warm server: the answer did not arrive whole: %w", err)
	}
	a, err := readAnswer(out)
	if err != nil {
		return Answer{}, fmt.Errorf("warm server: the answer is not an answer: %v", err)
	}
	return a, nil
}

// The hook process's side of the protocol is encoded and decoded without
// encoding/json's struct tables, which a fresh process would build for
// Event, Answer and the headers at every hand-off: the request and the
// event as maps and strings, the reply and the answer read with the one
// scanner (internal/jsonscan), falling back to encoding/json where it
// could read otherwise. What goes over the socket decodes as before.

// requestJSON is the request's header line, as json.Marshal writes it.
func requestJSON(q warmRequest) []byte {
	b := append([]byte(`{"v":`), strconv.Itoa(q.V)...)
	for _, f := range [...]struct{ k, v string }{{"dialect", q.Dialect}, {"config", q.Config}, {"ident", q.Ident}} {
		v, _ := json.Marshal(f.v) // a string: no struct tables
		b = append(append(append(append(b, `,"`...), f.k...), `":`...), v...)
	}
	return append(b, '}')
}

// eventJSON encodes ev as a map of its fields, the zero ones left out:
// json.Unmarshal into an Event reads it as it reads json.Marshal(ev).
func eventJSON(ev Event) ([]byte, error) {
	m := make(map[string]any, 12)
	str := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	if ev.Kind != 0 {
		m["Kind"] = int(ev.Kind)
	}
	str("Name", ev.Name)
	str("Session", ev.Session)
	str("Cwd", ev.Cwd)
	str("Turn", ev.Turn)
	str("Tool", ev.Tool)
	if ev.ToolInput != nil {
		m["ToolInput"] = ev.ToolInput
	}
	str("ToolUseID", ev.ToolUseID)
	if ev.ToolResponse != nil {
		m["ToolResponse"] = ev.ToolResponse
	}
	str("Error", ev.Error)
	str("Prompt", ev.Prompt)
	if ev.StopActive {
		m["StopActive"] = true
	}
	if ev.LastMessage != nil {
		m["LastMessage"] = *ev.LastMessage
	}
	str("AgentID", ev.AgentID)
	str("AgentType", ev.AgentType)
	str("Source", ev.Source)
	str("Reason", ev.Reason)
	if ev.Fields != nil {
		m["Fields"] = ev.Fields
	}
	return json.Marshal(m)
}

// readReply decodes a reply's header line as json.Unmarshal does.
func readReply(line []byte) (warmReply, error) {
	var rep warmReply
	fields := [...]string{"ok", "why", "ident", "size"}
	var out [len(fields)][]byte
	if ok, _ := jsonscan.Members(line, fields[:], out[:], jsonscan.Options{}); ok &&
		jsonscan.IntoBool(out[0], &rep.OK) && jsonscan.IntoString(out[1], &rep.Why) && jsonscan.IntoString(out[2], &rep.Ident) && jsonscan.IntoInt(out[3], &rep.Size) {
		return rep, nil
	}
	rep = warmReply{}
	err := json.Unmarshal(line, &rep)
	return rep, err
}

// readAnswer decodes an answer as json.Unmarshal into an Answer does.
func readAnswer(data []byte) (Answer, error) {
	var a Answer
	fields := [...]string{"Decision", "Reason", "UpdatedInput", "Context", "SystemMessage", "Halt", "StopReason", "UpdatedOutput", "HasOutput"}
	var out [len(fields)][]byte
	if ok, _ := jsonscan.Members(data, fields[:], out[:], jsonscan.Options{}); ok &&
		jsonscan.IntoString(out[0], &a.Decision) && jsonscan.IntoString(out[1], &a.Reason) && scanMap(out[2], &a.UpdatedInput) &&
		jsonscan.IntoString(out[3], &a.Context) && jsonscan.IntoString(out[4], &a.SystemMessage) && jsonscan.IntoBool(out[5], &a.Halt) &&
		jsonscan.IntoString(out[6], &a.StopReason) && jsonscan.IntoAny(out[7], &a.UpdatedOutput) && jsonscan.IntoBool(out[8], &a.HasOutput) {
		return a, nil
	}
	a = Answer{}
	err := json.Unmarshal(data, &a)
	return a, err
}

// scanMap reads a map member: absent or null leave the field as it is, as
// encoding/json does; false where encoding/json is to decide.
func scanMap(raw []byte, dst *map[string]any) bool {
	if raw == nil || string(raw) == "null" {
		return true
	}
	v, _, err := jsonscan.Decode(raw, jsonscan.Options{})
	m, ok := v.(map[string]any)
	*dst = m
	return err == nil && ok
}

// Forward is the hand-off as a command hook makes it (AnswerOnce): the
// warm server's answer, or ok false to answer in-process. A refused
// server is said on log; when cfg asks for a warm server ([harness] warm)
// and none listens, one is started for the events after this one (exe:
// the attune binary, "" for none).
func Forward(ctx context.Context, cfg *config.Config, d Dialect, ev Event, exe string, log io.Writer) (Answer, bool) {
	a, err := HandOff(ctx, cfg, d, ev, HandoffTimeout)
	if err == nil {
		return a, true
	}
	switch {
	case errors.Is(err, ErrNoWarm):
		if cfg.Warm && exe != "" {
			if err := StartWarm(exe, cfg.File); err != nil {
				fmt.Fprintf(log, "attune hook %s: starting the warm server: %v\n", d.Name(), err)
			}
		}
	default:
		fmt.Fprintf(log, "attune hook %s: answering in-process: %v\n", d.Name(), err)
	}
	return Answer{}, false
}

// WarmListener is the listening socket of a warm server: it holds the
// lock that makes it the only one for its configuration, and removes its
// socket when closed.
type WarmListener struct {
	net.Listener
	Path string
	lock *os.File
	once sync.Once
}

// Close stops listening, removes the socket and releases the lock.
func (l *WarmListener) Close() error {
	err := l.Listener.Close()
	l.once.Do(func() {
		_ = os.Remove(l.Path)
		_ = unlockFile(l.lock)
		l.lock.Close()
	})
	return err
}

// ListenWarm opens the warm socket for the configuration file cfgFile: it
// makes the user's runtime folder (mode 0700, checked), takes the lock
// beside the socket (ErrWarmRunning when another server holds it),
// replaces a stale socket and listens (mode 0600).
func ListenWarm(cfgFile string) (*WarmListener, error) {
	if runtime.GOOS == "windows" {
		return nil, errors.New("hook serve --socket: the warm hand-off runs on Unix only")
	}
	path := WarmSocket(cfgFile)
	if err := secureDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	lf, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	locked, err := tryLock(lf)
	if err != nil || !locked {
		lf.Close()
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w (%s)", ErrWarmRunning, path)
	}
	_ = lf.Truncate(0)
	_, _ = lf.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		lf.Close()
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		lf.Close()
		if len(path) > 100 {
			return nil, fmt.Errorf("%v (the socket's path is %d bytes; set XDG_RUNTIME_DIR to a shorter folder)", err, len(path))
		}
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		lf.Close()
		return nil, err
	}
	_ = os.Remove(path + ".spawn")
	return &WarmListener{Listener: ln, Path: path, lock: lf}, nil
}

// WarmOptions bound a warm server.
type WarmOptions struct {
	// Timeout bounds one event (DefaultTimeout).
	Timeout time.Duration
	// Idle ends the server after that long without an event; 0: never.
	Idle time.Duration
	// Ident is the identity the server answers for (Identity of its
	// configuration when it started).
	Ident string
	// Config is the configuration file's absolute path.
	Config string
	// MaxWarm bounds the sessions kept warm (64); past it, and past
	// WarmIdle (30 minutes) without an event, a session is stopped
	// (Runtime.EvictWarm), as `hook serve` over HTTP does.
	MaxWarm  int
	WarmIdle time.Duration
	// Recheck computes the identity again; a request for another identity
	// whose Recheck also differs from Ident (the files changed since the
	// server started) ends the server, so that the next event's starts
	// a fresh one. nil: never.
	Recheck func() (string, error)
}

// ServeWarm answers hand-offs on ln until ctx is done, the server goes
// idle past o.Idle, or it finds itself stale (o.Recheck). Each connection
// is one event, answered as Handle answers it.
func (r *Runtime) ServeWarm(ctx context.Context, ln net.Listener, o WarmOptions) error {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	var busy atomic.Int64
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	if o.Idle > 0 {
		go every(ctx, min(o.Idle/4, time.Minute), func() bool {
			if busy.Load() == 0 && time.Since(time.Unix(0, last.Load())) > o.Idle {
				fmt.Fprintf(r.log, "attune hook serve: no event for %s: exiting\n", o.Idle)
				cancel()
				return false
			}
			return true
		})
	}
	if o.MaxWarm <= 0 {
		o.MaxWarm = 64
	}
	if o.WarmIdle <= 0 {
		o.WarmIdle = 30 * time.Minute
	}
	go every(ctx, min(o.WarmIdle/4, time.Minute), func() bool {
		r.EvictWarm(ctx, o.MaxWarm, o.WarmIdle)
		return true
	})
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		busy.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer busy.Add(-1)
			defer last.Store(time.Now().UnixNano())
			defer func() {
				if r.WarmCount() > o.MaxWarm {
					r.EvictWarm(context.WithoutCancel(ctx), o.MaxWarm, o.WarmIdle)
				}
			}()
			if stale := r.answerWarm(ctx, c, o); stale {
				fmt.Fprintf(r.log, "attune hook serve: %s or its packs changed since this server started: exiting (the next event starts a fresh one when [harness] warm is set)\n", o.Config)
				cancel()
			}
		}()
	}
}

// answerWarm answers one hand-off; stale reports that the server's files
// changed since it started.
func (r *Runtime) answerWarm(ctx context.Context, c net.Conn, o WarmOptions) (stale bool) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(o.Timeout + 5*time.Second))
	reply := func(rep warmReply, body []byte) {
		rep.Size = len(body)
		head, _ := json.Marshal(rep)
		_, _ = c.Write(append(append(head, '\n'), body...))
	}
	if uc, ok := c.(*net.UnixConn); ok {
		if uid, ok := peerUID(uc); ok && uid != os.Getuid() {
			reply(warmReply{Why: fmt.Sprintf("the client runs as user %d, not as this server's user", uid)}, nil)
			return false
		}
	}
	br := bufio.NewReaderSize(c, 64<<10)
	line, err := br.ReadSlice('\n')
	if err != nil {
		return false
	}
	var req warmRequest
	if err := json.Unmarshal(line, &req); err != nil || req.V != warmVersion {
		reply(warmReply{Why: fmt.Sprintf("not a hand-off of version %d", warmVersion)}, nil)
		return false
	}
	d, ok := Dialects(req.Dialect)
	if !ok {
		reply(warmReply{Why: fmt.Sprintf("unknown dialect %q", req.Dialect)}, nil)
		return false
	}
	if req.Config != o.Config || req.Ident != o.Ident {
		reply(warmReply{Why: fmt.Sprintf("this server answers for %s as it was when it started; the event's configuration or packs differ", o.Config)}, nil)
		if o.Recheck != nil {
			if now, err := o.Recheck(); err != nil || now != o.Ident {
				return true
			}
		}
		return false
	}
	data, err := io.ReadAll(io.LimitReader(br, MaxEvent+1))
	if err != nil || len(data) > MaxEvent {
		reply(warmReply{Why: "the event did not arrive whole"}, nil)
		return false
	}
	var ev Event
	if err := json.Unmarshal(data, &ev); err != nil {
		reply(warmReply{Why: "not an event: " + err.Error()}, nil)
		return false
	}
	ectx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	rs := Responder{Dialect: d, Answer: func(ctx context.Context, ev Event) Answer { return r.Handle(ctx, d, ev) },
		Log: r.log, Who: "attune hook serve " + d.Name(), Timeout: o.Timeout, Go: r.Go}
	out, err := json.Marshal(rs.Decide(ectx, ev))
	if err != nil {
		out, _ = json.Marshal(Failure(ev, fmt.Errorf("the answer does not encode: %v", err), false))
	}
	reply(warmReply{OK: true, Ident: o.Ident}, out)
	return false
}

// every runs f each period until ctx ends or f returns false.
func every(ctx context.Context, period time.Duration, f func() bool) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if !f() {
				return
			}
		}
	}
}
