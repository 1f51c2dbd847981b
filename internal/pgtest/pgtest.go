// Package pgtest runs a private PostgreSQL cluster for tests that stop,
// restart or kill the server: such a test must not touch the cluster other
// tests share (ATTUNE_TEST_POSTGRES). The cluster is made with the server
// binaries under /usr/lib/postgresql/*/bin (.ci/postgres.sh installs them),
// listens only on a Unix socket in its own folder, runs with fsync on (what
// a crash test needs), and is removed when the test ends.
//
// Without the binaries, New fails the test. Only end-to-end tests (built
// with -tags e2e, the full suite) use it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is one private cluster.
type Server struct {
	t    testing.TB
	bin  string
	root string
	data string
	sock string
	port int
	asPG bool // run the server as the postgres user (we are root)
}

// New makes and starts a cluster with the database "attune".
func New(t testing.TB) *Server {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	sort.Strings(bins)
	if len(bins) == 0 {
		t.Fatal("pgtest: no PostgreSQL server binaries under /usr/lib/postgresql/*/bin: bash .ci/postgres.sh installs them (scripts/test does)")
	}
	var b [4]byte
	rand.Read(b[:])
	s := &Server{t: t, bin: filepath.Dir(bins[len(bins)-1]), root: filepath.Join(os.TempDir(), "attune-pgtest-"+hex.EncodeToString(b[:]))}
	s.data, s.sock = filepath.Join(s.root, "data"), filepath.Join(s.root, "sock")
	s.port = 20000 + int(b[0])<<4 + int(b[1])%16
	s.asPG = os.Geteuid() == 0
	if err := os.MkdirAll(s.sock, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.pgctl("-m", "immediate", "stop")
		os.RemoveAll(s.root)
	})
	if s.asPG {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("pgtest: running as root needs a postgres user (.ci/postgres.sh makes one): %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		for _, d := range []string{s.root, s.sock} {
			if err := os.Chown(d, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	if out, err := s.cmd(filepath.Join(s.bin, "initdb"), "-D", s.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	s.Start()
	c, err := pgx.Connect(context.Background(), s.url("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(context.Background(), `CREATE DATABASE attune`); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *Server) cmd(name string, args ...string) *exec.Cmd {
	if s.asPG {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
	}
	return exec.Command(name, args...)
}

func (s *Server) pgctl(args ...string) ([]byte, error) {
	return s.cmd(filepath.Join(s.bin, "pg_ctl"), append([]string{"-D", s.data}, args...)...).CombinedOutput()
}

func (s *Server) url(db string) string {
	return fmt.Sprintf("postgres://postgres@/%s?host=%s&port=%d&sslmode=disable", db, s.sock, s.port)
}

// URL is the database's URL.
func (s *Server) URL() string { return s.url("attune") }

// Start starts the server and waits until it takes connections. After a
// kill the old server's children may hold its shared memory for a moment:
// it tries again for up to 30 s.
func (s *Server) Start() {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := s.pgctl("-l", filepath.Join(s.root, "server.log"), "-w", "-t", "60", "-o",
			fmt.Sprintf("-p %d -k %s -c listen_addresses= -c fsync=on -c max_connections=200", s.port, s.sock), "start")
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(s.root, "server.log"))
			s.t.Fatalf("pgtest: start: %v\n%s\n%s", err, out, tail(string(log), 2000))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Restart stops the server (fast: connections are cut) and starts it.
func (s *Server) Restart() {
	s.t.Helper()
	if out, err := s.pgctl("-m", "fast", "-w", "stop"); err != nil {
		s.t.Fatalf("pgtest: stop: %v\n%s", err, out)
	}
	s.Start()
}

// Kill sends SIGKILL to the postmaster, as a crash of the machine's
// server would; its children end when they notice. The server is down
// until Start.
func (s *Server) Kill() {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.data, "postmaster.pid"))
	if err != nil {
		s.t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		s.t.Fatalf("pgtest: postmaster.pid: %v", err)
	}
	p, err := os.FindProcess(pid)
	if err == nil {
		err = p.Kill() // SIGKILL
	}
	if err != nil {
		s.t.Fatal(err)
	}
	// signal 0 asks whether it still runs (where signals exist; elsewhere
	// the first answer is an error and the wait ends)
	for end := time.Now().Add(5 * time.Second); p.Signal(syscall.Signal(0)) == nil && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
