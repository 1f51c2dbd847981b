// Package progcache keeps compiled programs on disk between processes: a
// program's source is lowered (a .scm file) and compiled once per pinned
// source, and every later process that loads the same source reads the
// compiled proto back instead of running the reader and the compiler.
//
// An entry is a file named by the source's sha256 and a hash of the build
// id and the program's file name (SHA256-HASH) in a folder of the user's own (mode 0700),
// written as a temporary file and renamed into place (mode 0600), so
// concurrent writers never leave half an entry under its name. It holds a
// format version, the build id, the file name, the source's sha256, the
// encoded proto (lua.EncodeProto) and an HMAC-SHA256 over all of it under a
// per-user secret key kept outside any project folder. Get serves an entry
// only when the MAC verifies under the key, the header names this build,
// this file and this source, and the source it is given hashes to that
// sha256; anything else (a corrupt, truncated or foreign entry, a file of
// another owner or open to others, a link) is a miss, the entry is removed
// and the program is compiled from source again. The folder is bounded: a
// Put past the size cap removes the least recently used entries.
//
// Threat model (docs/program-cache.md): a cached proto runs as the
// program, unchecked by the VM, so an entry must never make a guard run
// other code than its pin's source. The cache folder may sit in a project
// (beside an SQLite store), where a cloned repository or an unpacked
// archive could bring files of its choosing: it cannot bring a valid MAC
// without the user's key. Another user cannot write the folder or read the
// key (0700/0600, both checked, refused otherwise). Whoever can write as
// the user (or root) can change the attune binary itself and is out of
// scope.
package progcache

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	lua "github.com/attune-dev/attune/internal/lua"
)

// FormatVersion is the version of an entry's layout; an entry of another
// is a miss.
const FormatVersion = 1

// DefaultMaxBytes bounds the folder when Options.MaxBytes is 0.
const DefaultMaxBytes = 64 << 20

const (
	magic    = "ATTPROG\x00"
	keySize  = 32
	macSize  = sha256.Size
	tmpMark  = ".tmp-"
	touchAge = time.Hour // a hit older than this moves its entry's time to now
)

// Errors Get returns; errors.Is tells them apart.
var (
	// ErrMiss: no entry for this program.
	ErrMiss = errors.New("program cache: no entry")
	// ErrInvalid: an entry was there and is not trusted (corrupt,
	// truncated, foreign, of another build, of another owner); it was
	// removed.
	ErrInvalid = errors.New("program cache: entry refused")
	// ErrOff: the cache cannot be used (its folder or key is unsafe or
	// cannot be made); Cache.Err says why.
	ErrOff = errors.New("program cache: off")
	// ErrUnsafe: the folder or the key file is another user's, open to
	// others or a link (wrapped by Err).
	ErrUnsafe = errors.New("unsafe")
)

// Options say where a cache lives.
type Options struct {
	// Dir holds the entries; created with mode 0700.
	Dir string
	// KeyFile is the per-user secret the entries' MACs are made with,
	// created (32 random bytes, mode 0600) when missing. It must not be in
	// a folder another party can fill (not in a project).
	KeyFile string
	// MaxBytes bounds the entries' total size (0: DefaultMaxBytes).
	MaxBytes int64
	// Build identifies the compiler: an entry made by another build is a
	// miss (BuildID).
	Build string
}

// Cache is one folder of entries. Nothing touches the disk before the
// first Get or Put. Safe for concurrent use, by any number of processes.
type Cache struct {
	o    Options
	once sync.Once
	key  []byte
	err  error
	uid  int
}

// New returns the cache of o.
func New(o Options) *Cache {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	return &Cache{o: o}
}

// Dir is the folder of the entries.
func (c *Cache) Dir() string { return c.o.Dir }

// Err is why the cache is off (nil when it works or was not used yet).
func (c *Cache) Err() error {
	c.init()
	return c.err
}

func (c *Cache) init() {
	c.once.Do(func() {
		c.uid = os.Getuid()
		if c.o.Dir == "" || c.o.KeyFile == "" || c.o.Build == "" {
			c.err = errors.New("program cache: no folder, key file or build id")
			return
		}
		if err := c.secureDir(c.o.Dir); err != nil {
			c.err = err
			return
		}
		c.key, c.err = c.loadKey()
	})
}

// BuildID identifies this build of the compiler for version (the
// engine's): the Go toolchain, the proto encoding, the module's build
// information and the running executable's path, size and modification
// time, so a rebuilt binary never reads what another compiled.
func BuildID(version string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00codec %d\x00format %d\x00", version, runtime.Version(), lua.ProtoCodecVersion, FormatVersion)
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", bi.Path, bi.Main.Path, bi.Main.Version)
		for _, s := range bi.Settings {
			if strings.HasPrefix(s.Key, "vcs.") || s.Key == "-tags" {
				fmt.Fprintf(h, "%s=%s\x00", s.Key, s.Value)
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			fmt.Fprintf(h, "%s\x00%d\x00%d\x00", exe, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// name is the entry file of one program: the source's sha256, then a
// hash of the build and the file name ("" when sha is no sha256 in hex).
func (c *Cache) name(file, sha string) string {
	if len(sha) != 2*sha256.Size || strings.Trim(sha, "0123456789abcdef") != "" {
		return ""
	}
	h := sha256.Sum256([]byte("attune program\x00" + c.o.Build + "\x00" + file))
	return filepath.Join(c.o.Dir, sha+"-"+hex.EncodeToString(h[:12]))
}

// Get returns the cached proto of file whose source src has the sha256
// sha (hex), or an error: ErrMiss, ErrInvalid (the entry was refused and
// removed) or ErrOff.
func (c *Cache) Get(file, sha string, src []byte) (*lua.FunctionProto, error) {
	c.init()
	if c.err != nil {
		return nil, ErrOff
	}
	if sum := sha256.Sum256(src); hex.EncodeToString(sum[:]) != sha {
		return nil, fmt.Errorf("%w: the source does not hash to %s", ErrInvalid, sha)
	}
	name := c.name(file, sha)
	data, mtime, err := c.read(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrMiss
	}
	if err == nil {
		var p *lua.FunctionProto
		if p, err = c.open(data, file, sha); err == nil {
			if time.Since(mtime) > touchAge {
				now := time.Now()
				_ = os.Chtimes(name, now, now) // recently used: evicted last
			}
			return p, nil
		}
	}
	_ = os.Remove(name)
	return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, filepath.Base(name), err)
}

// read reads an entry that is a regular file of this user's, closed to
// others, and not larger than the cap.
func (c *Cache) read(name string) ([]byte, time.Time, error) {
	f, err := os.OpenFile(name, openFlags, 0)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	if err := c.private(fi, "entry"); err != nil {
		return nil, time.Time{}, err
	}
	if fi.Size() > c.o.MaxBytes || fi.Size() < int64(len(magic)+macSize) {
		return nil, time.Time{}, fmt.Errorf("size %d", fi.Size())
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, time.Time{}, err
	}
	return data, fi.ModTime(), nil
}

// private checks that fi is a regular file (or, for what "folder", a
// folder) of this user's with no permission for others.
func (c *Cache) private(fi os.FileInfo, what string) error {
	if what == "folder" {
		if !fi.IsDir() {
			return fmt.Errorf("not a folder (a link?)")
		}
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", what)
	}
	if runtime.GOOS == "windows" {
		return nil
	}
	if uid, ok := owner(fi); ok && uid != c.uid {
		return fmt.Errorf("%s belongs to user %d, not to this user (%d)", what, uid, c.uid)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s has mode %04o, open to other users", what, fi.Mode().Perm())
	}
	return nil
}

// open authenticates and decodes an entry of file with source sha.
func (c *Cache) open(data []byte, file, sha string) (*lua.FunctionProto, error) {
	body, sum := data[:len(data)-macSize], data[len(data)-macSize:]
	m := hmac.New(sha256.New, c.key)
	m.Write(body)
	if !hmac.Equal(m.Sum(nil), sum) {
		return nil, errors.New("its MAC does not verify (corrupt, truncated, or not written by this user's attune)")
	}
	r := reader{b: body}
	if string(r.next(len(magic))) != magic {
		return nil, errors.New("not an entry")
	}
	if v := r.uvarint(); v != FormatVersion {
		return nil, fmt.Errorf("format version %d, want %d", v, FormatVersion)
	}
	if b := r.str(); b != c.o.Build {
		return nil, fmt.Errorf("made by build %s, this is %s", b, c.o.Build)
	}
	if f := r.str(); f != file {
		return nil, fmt.Errorf("made for file %q, want %q", f, file)
	}
	if s := r.str(); s != sha {
		return nil, fmt.Errorf("made for source %s, want %s", s, sha)
	}
	payload := r.next(int(r.uvarint()))
	if r.bad || len(r.b) != 0 {
		return nil, errors.New("bad layout")
	}
	p, err := lua.DecodeProto(payload)
	if err != nil {
		return nil, err
	}
	if p.SourceName != file {
		return nil, fmt.Errorf("proto of %q, want %q", p.SourceName, file)
	}
	return p, nil
}

// Put stores the proto compiled from file's source src (sha256 sha),
// then evicts the least recently used entries past the cap.
func (c *Cache) Put(file, sha string, src []byte, p *lua.FunctionProto) error {
	c.init()
	if c.err != nil {
		return ErrOff
	}
	if sum := sha256.Sum256(src); hex.EncodeToString(sum[:]) != sha {
		return fmt.Errorf("program cache: the source of %s does not hash to %s", file, sha)
	}
	b := append([]byte(nil), magic...)
	b = binary.AppendUvarint(b, FormatVersion)
	b = appendStr(b, c.o.Build)
	b = appendStr(b, file)
	b = appendStr(b, sha)
	payload, err := lua.EncodeProto(nil, p)
	if err != nil {
		return fmt.Errorf("program cache: %w", err)
	}
	b = binary.AppendUvarint(b, uint64(len(payload)))
	b = append(b, payload...)
	m := hmac.New(sha256.New, c.key)
	m.Write(b)
	b = m.Sum(b)
	if int64(len(b)) > c.o.MaxBytes/4 {
		return nil // too big to keep: compiled each time
	}
	if err := writeFile(c.o.Dir, c.name(file, sha), b); err != nil {
		return fmt.Errorf("program cache: %w", err)
	}
	return c.evict()
}

// writeFile writes data under name through a temporary file renamed into
// place: a reader sees the old entry, the new one, or none.
func writeFile(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, tmpMark+"*") // mode 0600
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// evict removes the least recently used entries (by modification time)
// until the folder is within the cap, and temporary files a writer left
// behind more than a minute ago.
func (c *Cache) evict() error {
	entries, err := os.ReadDir(c.o.Dir)
	if err != nil {
		return err
	}
	type item struct {
		name string
		size int64
		at   time.Time
	}
	var items []item
	var total int64
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if strings.HasPrefix(e.Name(), tmpMark) {
			if time.Since(fi.ModTime()) > time.Minute {
				os.Remove(filepath.Join(c.o.Dir, e.Name()))
			}
			continue
		}
		items = append(items, item{e.Name(), fi.Size(), fi.ModTime()})
		total += fi.Size()
	}
	if total <= c.o.MaxBytes {
		return nil
	}
	slices.SortFunc(items, func(a, b item) int { return a.at.Compare(b.at) })
	for _, it := range items {
		if total <= c.o.MaxBytes {
			break
		}
		if err := os.Remove(filepath.Join(c.o.Dir, it.name)); err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= it.size
		}
	}
	return nil
}

// secureDir creates dir (mode 0700) and checks it is this user's, closed
// to others, and no link.
func (c *Cache) secureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("program cache: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("program cache: %w", err)
	}
	if err := c.private(fi, "folder"); err != nil {
		return fmt.Errorf("program cache: %w: %s: %v; remove it or run chmod 700 %s (or turn the cache off: ATTUNE_NO_PROGRAM_CACHE=1)", ErrUnsafe, dir, err, dir)
	}
	return nil
}

// loadKey reads the per-user key, making it first when there is none
// (a link of a complete temporary file: concurrent makers agree on one).
func (c *Cache) loadKey() ([]byte, error) {
	kf := c.o.KeyFile
	if err := c.secureDir(filepath.Dir(kf)); err != nil {
		return nil, err
	}
	for range 2 {
		key, err := c.readKey(kf)
		if !errors.Is(err, fs.ErrNotExist) {
			return key, err
		}
		key = make([]byte, keySize)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("program cache: key: %w", err)
		}
		f, err := os.CreateTemp(filepath.Dir(kf), tmpMark+"key-*")
		if err != nil {
			return nil, fmt.Errorf("program cache: key: %w", err)
		}
		_, err = f.Write(key)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Link(f.Name(), kf)
		}
		os.Remove(f.Name())
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("program cache: key: %w", err)
		}
	}
	return c.readKey(kf)
}

func (c *Cache) readKey(kf string) ([]byte, error) {
	f, err := os.OpenFile(kf, openFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := c.private(fi, "key file"); err != nil {
		return nil, fmt.Errorf("program cache: %w: %s: %v; remove it (a new key is made) or turn the cache off: ATTUNE_NO_PROGRAM_CACHE=1", ErrUnsafe, kf, err)
	}
	key := make([]byte, keySize+1)
	n, _ := io.ReadFull(f, key)
	if n != keySize {
		return nil, fmt.Errorf("program cache: %s: %d bytes, want %d; remove it (a new key is made)", kf, n, keySize)
	}
	return key[:keySize], nil
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

type reader struct {
	b   []byte
	bad bool
}

func (r *reader) next(n int) []byte {
	if r.bad || n < 0 || n > len(r.b) {
		r.bad = true
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) uvarint() uint64 {
	if r.bad {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > 1<<40 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) str() string { return string(r.next(int(r.uvarint()))) }

// String is for messages: the folder and cap.
func (c *Cache) String() string {
	return c.o.Dir + " (at most " + strconv.FormatInt(c.o.MaxBytes>>20, 10) + " MiB)"
}
