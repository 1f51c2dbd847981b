package inspect

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
)

//go:embed assets
var assets embed.FS

// Server serves the inspector: the page, its module scripts and the JSON
// API, every one under /TOKEN/. A request without the token, or whose Host
// is not a loopback address (a page of another site resolving its name to
// 127.0.0.1), is answered 403.
type Server struct {
	st    engine.Store
	token string
	cfg   *config.Config // for replays; nil: none

	mu    sync.Mutex
	cache map[string]*cached // by session id asked
}

type cached struct {
	stamp string // the journals' lengths when it was built
	t     *Timeline
}

// NewToken returns a fresh random token for one run.
func NewToken() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// NewServer serves the sessions of st under the token. With cfg (the
// configuration the sessions ran with) the page can replay a session
// (api/replay) on a scratch copy of st.
func NewServer(st engine.Store, token string, cfg *config.Config) *Server {
	return &Server{st: st, token: token, cfg: cfg, cache: map[string]*cached{}}
}

// Path is the page's path ("/TOKEN/").
func (s *Server) Path() string { return "/" + s.token + "/" }

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !loopbackHost(r.Host) {
		http.Error(w, "attune inspect answers only on a loopback address", http.StatusForbidden)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, s.Path())
	if !ok || s.token == "" {
		http.Error(w, "forbidden: the inspector's address holds a token; use the URL attune inspect printed", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "the inspector only reads", http.StatusMethodNotAllowed)
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'")
	switch {
	case rest == "" || rest == "index.html":
		s.asset(w, "index.html")
	case strings.HasPrefix(rest, "assets/"):
		s.asset(w, strings.TrimPrefix(rest, "assets/"))
	case rest == "api/sessions":
		list, err := Sessions(r.Context(), s.st)
		if err != nil {
			jsonError(w, err, http.StatusInternalServerError)
			return
		}
		writeJSON(w, map[string]any{"sessions": list})
	case rest == "api/session":
		q := r.URL.Query()
		offset, _ := strconv.Atoi(q.Get("offset"))
		limit, _ := strconv.Atoi(q.Get("limit"))
		t, err := s.timeline(r.Context(), q.Get("id"))
		if err != nil {
			code := http.StatusInternalServerError
			if isNoSession(err) {
				code = http.StatusNotFound
			}
			jsonError(w, err, code)
			return
		}
		data, err := t.Page(offset, limit).JSON()
		if err != nil {
			jsonError(w, err, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(data)
	case rest == "api/replay":
		if s.cfg == nil {
			jsonError(w, errors.New("this inspector has no configuration to replay with"), http.StatusNotFound)
			return
		}
		t, err := s.timeline(r.Context(), r.URL.Query().Get("id"))
		var rep *Replay
		if err == nil {
			rep, err = ReplayOn(r.Context(), s.cfg, s.st, t, nil)
		}
		if err != nil {
			code := http.StatusInternalServerError
			if isNoSession(err) {
				code = http.StatusNotFound
			}
			jsonError(w, err, code)
			return
		}
		writeJSON(w, rep)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) asset(w http.ResponseWriter, name string) {
	data, err := fs.ReadFile(assets, "assets/"+name)
	if err != nil || strings.Contains(name, "/") {
		http.Error(w, "no such asset", http.StatusNotFound)
		return
	}
	switch {
	case strings.HasSuffix(name, ".js"):
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case strings.HasSuffix(name, ".css"):
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	default:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	w.Write(data)
}

// timeline returns the session's timeline, built again only when one of
// its journals grew.
func (s *Server) timeline(ctx context.Context, id string) (*Timeline, error) {
	stamp := ""
	s.mu.Lock()
	c := s.cache[id]
	s.mu.Unlock()
	if c != nil {
		for _, in := range c.t.Instances {
			n, err := engine.JournalLength(ctx, s.st, c.t.Session, in.ID)
			if err != nil {
				return nil, err
			}
			stamp += strconv.FormatInt(n, 10) + ","
		}
		if stamp == c.stamp {
			return c.t, nil
		}
	}
	t, err := Load(ctx, s.st, id)
	if err != nil {
		return nil, err
	}
	stamp = ""
	for _, in := range t.Instances {
		stamp += strconv.Itoa(in.Entries) + ","
	}
	s.mu.Lock()
	s.cache = map[string]*cached{id: {stamp: stamp, t: t}} // one session kept
	s.mu.Unlock()
	return t, nil
}

func isNoSession(err error) bool {
	return err != nil && strings.Contains(err.Error(), engine.ErrNoSession.Error())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func jsonError(w http.ResponseWriter, err error, code int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

// loopbackHost reports whether a request's Host names a loopback address
// (localhost, 127.0.0.0/8, ::1), with or without a port.
func loopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// CheckListen refuses a listen address that is not loopback: the
// inspector shows what sessions held, arguments and results included.
func CheckListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return &ListenError{Addr: addr, Why: "want HOST:PORT, such as 127.0.0.1:8788"}
	}
	if _, err := strconv.Atoi(port); err != nil {
		return &ListenError{Addr: addr, Why: "the port is not a number"}
	}
	if !loopbackHost(host) {
		return &ListenError{Addr: addr, Why: "not a loopback address; the inspector shows what sessions held (arguments, results, notes) and answers only on 127.0.0.1, ::1 or localhost"}
	}
	return nil
}

// ListenError is a --listen address the inspector refuses.
type ListenError struct{ Addr, Why string }

func (e *ListenError) Error() string { return "--listen " + e.Addr + ": " + e.Why }
