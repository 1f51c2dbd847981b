package session

import (
	"context"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/attune-dev/attune/store"
)

// R1.10: the session store keeps the journal and merges notes; it never
// loads programs or dispatches boundaries: it imports neither the Lua
// binding nor the engine.
func TestSessionNeverLoadsPrograms(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, banned := range []string{"github.com/attune-dev/attune/engine", "github.com/attune-dev/attune/luabind", "github.com/attune-dev/attune/scheme", "github.com/attune-dev/attune/pin", "github.com/attune-dev/attune/internal/lua"} {
				if path == banned {
					t.Errorf("%s imports %s: the session store must not load programs or dispatch boundaries", f, path)
				}
			}
		}
	}
}

// R3.7: every emission a new id; placing consumes; consumed and expired
// notes throw with the contract's texts.
func TestBook(t *testing.T) {
	b := NewBook("s")
	ids := map[string]bool{}
	for _, text := range []string{"one", "two", "three"} {
		id := b.NewID()
		if ids[id] {
			t.Fatalf("id %s reused", id)
		}
		ids[id] = true
		b.Add(Note{ID: id, Kind: Ambient, Text: text})
	}
	placed := b.Place()
	if len(placed) != 3 || placed[0].Text != "one" || placed[2].Text != "three" {
		t.Fatalf("placed %v", placed)
	}
	if err := b.Consume(placed[0].ID); err == nil || err.Error() != "note "+placed[0].ID+" already consumed" {
		t.Fatalf("consume placed: %v", err)
	}
	id := b.NewID()
	b.Add(Note{ID: id, Kind: Activating, Text: "late"})
	b.Seal()
	if err := b.Consume(id); err == nil || err.Error() != "note "+id+" expired" {
		t.Fatalf("consume expired: %v", err)
	}
	if len(b.Place()) != 0 {
		t.Fatal("an expired note was placed")
	}
}

// R3.8: the loop-end result joins host addenda and notes.
func TestMerge(t *testing.T) {
	le := Merge([]string{"host says"}, []Note{{ID: "n1", Text: "behavior says"}})
	if len(le.Addenda) != 1 || len(le.Notes) != 1 || le.Addenda[0] != "host says" || le.Notes[0].Text != "behavior says" {
		t.Fatalf("%+v", le)
	}
}

func TestJournalRoundTrip(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	j := OpenJournal(st, "s1", "i1")
	out := "reply"
	j.Add(Entry{Type: TurnBegin, Turn: 1, Input: "hi", Status: "ok"})
	j.Add(Entry{Type: RoundEnd, Turn: 1, Round: 1, Output: &out, Continue: true})
	if n, _ := st.Length(ctx, LogName("s1", "i1")); n != 0 {
		t.Fatal("entries written before a flush")
	}
	got, err := j.Entries(ctx)
	if err != nil || len(got) != 2 || got[0].Input != "hi" || *got[1].Output != "reply" || !got[1].Continue {
		t.Fatalf("%+v %v", got, err)
	}
	if err := j.Truncate(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got, _ := j.Entries(ctx); len(got) != 1 {
		t.Fatalf("after truncate: %+v", got)
	}
}

// R3.7: sealed notes leave memory (the journal keeps them), yet consuming
// one still fails with the contract's text, and placing looks only at the
// notes not placed yet.
func TestBookDropsSealedNotes(t *testing.T) {
	b := NewBook("s")
	var placedID, expiredID string
	for turn := 1; turn <= 100; turn++ {
		for k := range 50 {
			id := b.NewID()
			b.Add(Note{ID: id, Kind: Ambient, Text: "n", Turn: turn})
			if turn == 3 && k == 0 {
				placedID = id
			}
		}
		if turn != 5 {
			if got := b.Place(); len(got) != 50 {
				t.Fatalf("turn %d placed %d notes, want the turn's 50", turn, len(got))
			}
		}
		if turn == 5 {
			expiredID = b.Notes()[7].ID
		}
		if sealed := b.Seal(); len(sealed) != 50 || sealed[0].Turn != turn || sealed[0].Expired != (turn == 5) {
			t.Fatalf("turn %d sealed %d notes: %+v", turn, len(sealed), sealed[0])
		}
		if len(b.Notes()) != 0 || len(b.byID) != 0 || len(b.pending) != 0 {
			t.Fatalf("turn %d: sealed notes kept in memory", turn)
		}
	}
	if err := b.Consume(placedID); err == nil || err.Error() != "note "+placedID+" already consumed" {
		t.Fatalf("consume an old placed note: %v", err)
	}
	if err := b.Consume(expiredID); err == nil || err.Error() != "note "+expiredID+" expired" {
		t.Fatalf("consume an old expired note: %v", err)
	}
	if err := b.Consume("s:n999999"); err == nil || err.Error() != "note s:n999999 does not exist in session s" {
		t.Fatalf("consume an unknown note: %v", err)
	}
	b.Adopt(Note{ID: placedID, Text: "again"})
	if len(b.Notes()) != 0 {
		t.Fatal("a sealed note was adopted again")
	}
}
