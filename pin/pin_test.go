package pin

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/attune-dev/attune/store"
)

// R2.2: a new selection hashes and stores each source; pin order is the
// bot's behaviors order; the first pack holding a name wins.
func TestResolve(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	first := fstest.MapFS{"a.lua": {Data: []byte("-- a first")}, "commands/hi.scm": {Data: []byte("(define/command (lambda (ctx text) text))")}}
	second := fstest.MapFS{"a.lua": {Data: []byte("-- a second")}, "b.scm": {Data: []byte("; b")}, "commands/hi.scm": {Data: []byte("; shadowed")}}
	packs := Packs{{Name: "first", FS: first}, {Name: "second", FS: second}}
	p, err := Resolve(ctx, st, packs, "main", []string{"b", "a"}, map[string]map[string]any{"a": {"k": 1.0}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Programs) != 2 || p.Programs[0].Name != "b" || p.Programs[1].Pack != "first" || p.Programs[1].File != "a.lua" {
		t.Fatalf("%+v", p.Programs)
	}
	src, err := Source(ctx, st, "a", p.Programs[1].SHA256)
	if err != nil || string(src) != "-- a first" {
		t.Fatalf("%q %v", src, err)
	}
	cfg, err := Config(ctx, st, p.Programs[1])
	if err != nil || cfg["k"] != 1.0 {
		t.Fatalf("%v %v", cfg, err)
	}
	if c, ok := p.Command("hi"); !ok || c.Pack != "first" {
		t.Fatalf("command %+v", c)
	}
	if w := packs.Shadowed(); len(w) != 1 || !strings.Contains(w[0], "program a in pack second is shadowed by pack first") {
		t.Fatalf("shadowed %v", w)
	}
	if _, err := Resolve(ctx, st, packs, "main", []string{"zzz"}, nil); err == nil {
		t.Fatal("a program no pack holds resolved")
	}
}

// R1.6: the pinned source is the only source.
func TestSourceMissing(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	sha, _ := st.PutBlob(ctx, []byte("x = 1"))
	st.DeleteBlob(ctx, sha)
	_, err := Source(ctx, st, "v", sha)
	var me *MissingError
	if !errors.As(err, &me) || err.Error() != "pin-missing: program v sha256 "+sha {
		t.Fatalf("got %v", err)
	}
}

// R2.1: a stored pin is what an instance runs.
func TestSaveLoad(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	p := &Pin{Bot: "main", Programs: []Program{{Name: "a", File: "a.lua", SHA256: "abc", Config: "def"}}}
	if err := Save(ctx, st, "i1", p); err != nil {
		t.Fatal(err)
	}
	got, err := Load(ctx, st, "i1")
	if err != nil || got.Programs[0].SHA256 != "abc" || got.Bot != "main" {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := Load(ctx, st, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("got %v", err)
	}
}
