package harness

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
)

// What behaviors print or log under attune hook goes to a log file of the
// session under the store's folder (.attune/logs/SESSION.log beside
// .attune/state.db), and to standard error too when ATTUNE_DEBUG=1
// (docs/limits.md bounds it).

// MaxLogFile is the size past which a session's log file is moved to
// SESSION.log.1 (replacing the one before) and started again.
const MaxLogFile = 1 << 20

// traceLog writes printed lines to per-session files.
type traceLog struct {
	dir    string    // "" when the store has no folder (memory, PostgreSQL): files go nowhere
	stderr io.Writer // nil unless ATTUNE_DEBUG=1

	mu    sync.Mutex
	files map[string]*os.File
}

func newTraceLog(cfg *config.Config, stderr io.Writer, getenv func(string) string) *traceLog {
	t := &traceLog{files: map[string]*os.File{}}
	if kind, target, err := config.ParseStore(cfg.Engine.Store, cfg.Dir); err == nil && kind == config.StoreSQLite {
		t.dir = filepath.Join(filepath.Dir(target), "logs")
	}
	if getenv("ATTUNE_DEBUG") == "1" {
		t.stderr = stderr
	}
	return t
}

// LogFile is the log file of a session's printed lines for a store file
// (SQLite) path.
func LogFile(storeFile, session string) string {
	return filepath.Join(filepath.Dir(storeFile), "logs", logName(session)+".log")
}

// logName is a session id as a file name: path separators and anything
// unusual become "_".
func logName(session string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_' {
			return r
		}
		return '_'
	}, session)
}

func (t *traceLog) print(p engine.Printed) {
	line := fmt.Sprintf("%s %s %s [%s] %s", time.Now().UTC().Format(time.RFC3339), p.Instance, p.Program, p.Level, p.Text)
	if p.Turn > 0 {
		line = fmt.Sprintf("%s %s turn %d round %d %s [%s] %s", time.Now().UTC().Format(time.RFC3339), p.Instance, p.Turn, p.Round, p.Program, p.Level, p.Text)
	}
	line = strings.ReplaceAll(line, "\n", "\n    ") + "\n"
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stderr != nil {
		io.WriteString(t.stderr, "attune: "+line)
	}
	if t.dir == "" || p.Session == "" {
		return
	}
	f := t.files[p.Session]
	if f == nil {
		if err := os.MkdirAll(t.dir, 0o700); err != nil {
			return
		}
		var err error
		if f, err = os.OpenFile(filepath.Join(t.dir, logName(p.Session)+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err != nil {
			return
		}
		t.files[p.Session] = f
	}
	if st, err := f.Stat(); err == nil && st.Size()+int64(len(line)) > MaxLogFile {
		name := f.Name()
		f.Close()
		os.Rename(name, name+".1")
		var err error
		if f, err = os.OpenFile(name, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err != nil {
			delete(t.files, p.Session)
			return
		}
		t.files[p.Session] = f
	}
	f.WriteString(line)
}

func (t *traceLog) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, f := range t.files {
		f.Close()
		delete(t.files, k)
	}
}
