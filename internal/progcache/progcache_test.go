package progcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	lua "github.com/attune-dev/attune/internal/lua"
	"github.com/attune-dev/attune/internal/lua/parse"
)

func compile(t testing.TB, file, src string) *lua.FunctionProto {
	t.Helper()
	chunk, err := parse.Parse(strings.NewReader(src), file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := lua.Compile(chunk, file)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func shaOf(src string) string {
	s := sha256.Sum256([]byte(src))
	return hex.EncodeToString(s[:])
}

func encoded(t testing.TB, p *lua.FunctionProto) []byte {
	t.Helper()
	b, err := lua.EncodeProto(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testCache is a cache in a fresh folder with its key beside it.
func testCache(t testing.TB, o Options) *Cache {
	t.Helper()
	dir := t.TempDir()
	if o.Dir == "" {
		o.Dir = filepath.Join(dir, "programs")
	}
	if o.KeyFile == "" {
		o.KeyFile = filepath.Join(dir, "user", "key")
	}
	if o.Build == "" {
		o.Build = "test-build"
	}
	return New(o)
}

const srcA = "local n = 0\nreturn function(x)\n  n = n + x\n  if n > 10 then error('too big') end\n  return n, 'ok', true, nil, 2.5\nend\n"

func TestPutGet(t *testing.T) {
	c := testCache(t, Options{})
	p := compile(t, "a.lua", srcA)
	if _, err := c.Get("a.lua", shaOf(srcA), []byte(srcA)); !errors.Is(err, ErrMiss) {
		t.Fatalf("empty cache: %v", err)
	}
	if err := c.Put("a.lua", shaOf(srcA), []byte(srcA), p); err != nil {
		t.Fatal(err)
	}
	q, err := c.Get("a.lua", shaOf(srcA), []byte(srcA))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encoded(t, p), encoded(t, q)) {
		t.Fatal("the cached proto differs from the compiled one")
	}
	// another file name, another source: other entries
	if _, err := c.Get("b.lua", shaOf(srcA), []byte(srcA)); !errors.Is(err, ErrMiss) {
		t.Fatalf("other file: %v", err)
	}
	// a source that does not hash to the sha asked for is never served
	if _, err := c.Get("a.lua", shaOf(srcA), []byte(srcA+"\n")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("source not matching its sha: %v", err)
	}
	if runtime.GOOS != "windows" {
		for _, f := range []string{c.o.Dir, c.name("a.lua", shaOf(srcA)), c.o.KeyFile, filepath.Dir(c.o.KeyFile)} {
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s: mode %04o, want none for others", f, fi.Mode().Perm())
			}
		}
	}
}

// TestRefusedEntriesAreRebuilt: a corrupt, truncated or foreign entry
// (another key's, another build's, another source's or file's under this
// one's name, another owner's mode, a link) is refused, removed, and the
// next Put makes a good one.
func TestRefusedEntriesAreRebuilt(t *testing.T) {
	const srcB = "return 'b'\n"
	p := compile(t, "a.lua", srcA)
	pb := compile(t, "a.lua", srcB)
	cases := map[string]func(t *testing.T, c *Cache, name string){
		"flipped byte": func(t *testing.T, c *Cache, name string) {
			data, _ := os.ReadFile(name)
			data[len(data)/2] ^= 0x40
			os.WriteFile(name, data, 0o600)
		},
		"truncated": func(t *testing.T, c *Cache, name string) {
			data, _ := os.ReadFile(name)
			os.WriteFile(name, data[:len(data)-7], 0o600)
		},
		"empty": func(t *testing.T, c *Cache, name string) {
			os.WriteFile(name, nil, 0o600)
		},
		"another key's": func(t *testing.T, c *Cache, name string) {
			other := New(Options{Dir: filepath.Join(t.TempDir(), "p"), KeyFile: filepath.Join(t.TempDir(), "u", "k"), Build: c.o.Build})
			if err := other.Put("a.lua", shaOf(srcA), []byte(srcA), p); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(other.name("a.lua", shaOf(srcA)))
			os.WriteFile(name, data, 0o600)
		},
		"another build's": func(t *testing.T, c *Cache, name string) {
			other := New(Options{Dir: c.o.Dir, KeyFile: c.o.KeyFile, Build: "other-build"})
			if err := other.Put("a.lua", shaOf(srcA), []byte(srcA), p); err != nil {
				t.Fatal(err)
			}
			os.Rename(other.name("a.lua", shaOf(srcA)), name)
		},
		"another source's": func(t *testing.T, c *Cache, name string) {
			// a valid entry of this user's, for other code, under the name
			// of this source: must not run in its place
			if err := c.Put("a.lua", shaOf(srcB), []byte(srcB), pb); err != nil {
				t.Fatal(err)
			}
			os.Rename(c.name("a.lua", shaOf(srcB)), name)
		},
		"another file's": func(t *testing.T, c *Cache, name string) {
			if err := c.Put("b.lua", shaOf(srcA), []byte(srcA), compile(t, "b.lua", srcA)); err != nil {
				t.Fatal(err)
			}
			os.Rename(c.name("b.lua", shaOf(srcA)), name)
		},
		"open to others": func(t *testing.T, c *Cache, name string) {
			if runtime.GOOS == "windows" {
				t.Fatal("no modes on Windows")
			}
			os.Chmod(name, 0o644)
		},
		"a link": func(t *testing.T, c *Cache, name string) {
			target := filepath.Join(t.TempDir(), "elsewhere")
			data, _ := os.ReadFile(name)
			os.WriteFile(target, data, 0o600)
			os.Remove(name)
			if err := os.Symlink(target, name); err != nil {
				t.Fatal(err)
			}
		},
	}
	for what, spoil := range cases {
		t.Run(what, func(t *testing.T) {
			c := testCache(t, Options{})
			if err := c.Put("a.lua", shaOf(srcA), []byte(srcA), p); err != nil {
				t.Fatal(err)
			}
			name := c.name("a.lua", shaOf(srcA))
			spoil(t, c, name)
			if q, err := c.Get("a.lua", shaOf(srcA), []byte(srcA)); !errors.Is(err, ErrInvalid) || q != nil {
				t.Fatalf("spoiled entry: %v", err)
			}
			if _, err := os.Lstat(name); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the refused entry is still there: %v", err)
			}
			if err := c.Put("a.lua", shaOf(srcA), []byte(srcA), p); err != nil {
				t.Fatal(err)
			}
			q, err := c.Get("a.lua", shaOf(srcA), []byte(srcA))
			if err != nil || !bytes.Equal(encoded(t, q), encoded(t, p)) {
				t.Fatalf("rebuilt entry: %v", err)
			}
		})
	}
}

// TestUnsafePlacesTurnTheCacheOff: a folder or key file open to others
// is not used (nothing read, nothing written).
func TestUnsafePlacesTurnTheCacheOff(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Fatal("no modes on Windows")
	}
	p := compile(t, "a.lua", srcA)
	t.Run("folder", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "programs")
		os.MkdirAll(dir, 0o755)
		os.Chmod(dir, 0o777)
		c := testCache(t, Options{Dir: dir})
		if err := c.Put("a.lua", shaOf(srcA), []byte(srcA), p); !errors.Is(err, ErrOff) {
			t.Fatalf("put: %v", err)
		}
		if !errors.Is(c.Err(), ErrUnsafe) || !strings.Contains(c.Err().Error(), "chmod 700") {
			t.Fatalf("err: %v", c.Err())
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("wrote %d files", len(entries))
		}
	})
	t.Run("key", func(t *testing.T) {
		kdir := t.TempDir()
		os.Chmod(kdir, 0o700)
		kf := filepath.Join(kdir, "key")
		os.WriteFile(kf, bytes.Repeat([]byte{1}, keySize), 0o644)
		c := testCache(t, Options{KeyFile: kf})
		if _, err := c.Get("a.lua", shaOf(srcA), []byte(srcA)); !errors.Is(err, ErrOff) {
			t.Fatalf("get: %v", err)
		}
		if !errors.Is(c.Err(), ErrUnsafe) {
			t.Fatalf("err: %v", c.Err())
		}
	})
}

// TestConcurrentWriters: caches of one folder and one (new) key, as
// separate processes have, write and read the same entries at once:
// they agree on the key, and no reader ever meets half an entry.
func TestConcurrentWriters(t *testing.T) {
	base := testCache(t, Options{})
	srcs := make([]string, 8)
	protos := make([]*lua.FunctionProto, len(srcs))
	for i := range srcs {
		srcs[i] = fmt.Sprintf("local k = %d\n%s", i, srcA)
		protos[i] = compile(t, "a.lua", srcs[i])
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := New(base.o) // its own key read, as another process
			for round := range 20 {
				i := (w + round) % len(srcs)
				sha := shaOf(srcs[i])
				q, err := c.Get("a.lua", sha, []byte(srcs[i]))
				switch {
				case err == nil:
					if !bytes.Equal(encoded(t, q), encoded(t, protos[i])) {
						errs <- fmt.Errorf("writer %d: entry %d differs", w, i)
						return
					}
				case errors.Is(err, ErrMiss):
				default:
					errs <- fmt.Errorf("writer %d: %v", w, err)
					return
				}
				if err := c.Put("a.lua", sha, []byte(srcs[i]), protos[i]); err != nil {
					errs <- fmt.Errorf("writer %d: %v", w, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	entries, _ := os.ReadDir(base.o.Dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tmpMark) {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	if len(entries) != len(srcs) {
		t.Errorf("%d entries, want %d", len(entries), len(srcs))
	}
}

// TestEviction: past the cap, the least recently used entries go first.
func TestEviction(t *testing.T) {
	p := compile(t, "a.lua", srcA)
	size := int64(len(encoded(t, p))) + 200
	c := testCache(t, Options{MaxBytes: 5*size + size/2})
	var names []string
	start := time.Now().Add(-10 * time.Hour)
	for i := range 12 {
		src := fmt.Sprintf("-- %02d\n%s", i, srcA)
		if err := c.Put("a.lua", shaOf(src), []byte(src), compile(t, "a.lua", src)); err != nil {
			t.Fatal(err)
		}
		name := c.name("a.lua", shaOf(src))
		at := start.Add(time.Duration(i) * time.Minute)
		os.Chtimes(name, at, at) // written in order
		names = append(names, name)
	}
	var total int64
	entries, _ := os.ReadDir(c.o.Dir)
	for _, e := range entries {
		fi, _ := e.Info()
		total += fi.Size()
	}
	if total > c.o.MaxBytes {
		t.Fatalf("%d bytes kept, cap %d", total, c.o.MaxBytes)
	}
	if len(entries) < 4 {
		t.Fatalf("only %d entries kept", len(entries))
	}
	// the newest stay, the oldest went
	for i, name := range names {
		_, err := os.Stat(name)
		kept := err == nil
		if i >= len(names)-len(entries) != kept {
			t.Errorf("entry %d kept=%v (of %d kept)", i, kept, len(entries))
		}
	}
	t.Logf("kept %d, total %d, cap %d", len(entries), total, c.o.MaxBytes)
	// a hit makes an entry recent: read the oldest kept, add one more
	oldest := len(names) - len(entries)
	src := fmt.Sprintf("-- %02d\n%s", oldest, srcA)
	if _, err := c.Get("a.lua", shaOf(src), []byte(src)); err != nil {
		t.Fatal(err)
	}
	more := "-- more\n" + srcA
	if err := c.Put("a.lua", shaOf(more), []byte(more), compile(t, "a.lua", more)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(names[oldest]); err != nil {
		t.Errorf("the entry just read was evicted: %v", err)
	}
	if _, err := os.Stat(names[oldest+1]); err == nil {
		t.Errorf("the least recently used entry was kept")
	}
}

// BenchmarkGet: one hit, a program of the size of the engine's tasks.scm
// lowered (what a hook process pays per cached program).
func BenchmarkGet(b *testing.B) {
	var sb strings.Builder
	for i := range 60 {
		fmt.Fprintf(&sb, "local function f%d(a, b)\n  if a > %d then return {x = a, y = 'v%d'} end\n  return string.format('%%s:%%d', b, a)\nend\n", i, i, i)
	}
	src := sb.String()
	c := testCache(b, Options{})
	if err := c.Put("a.lua", shaOf(src), []byte(src), compile(b, "a.lua", src)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Get("a.lua", shaOf(src), []byte(src)); err != nil {
			b.Fatal(err)
		}
	}
}
