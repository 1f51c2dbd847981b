package session

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/attune-dev/attune/store"
)

func randPlain(rng *rand.Rand, depth int) any {
	switch k := rng.IntN(9); {
	case k == 0:
		return nil
	case k == 1:
		return rng.IntN(2) == 0
	case k == 2:
		return float64(rng.IntN(2000) - 1000)
	case k == 3:
		return rng.NormFloat64() * 1e9
	case k == 4 && depth < 3:
		m := map[string]any{}
		for range rng.IntN(4) {
			m[randString(rng)] = randPlain(rng, depth+1)
		}
		return m
	case k == 5 && depth < 3:
		l := make([]any, rng.IntN(4))
		for n := range l {
			l[n] = randPlain(rng, depth+1)
		}
		return l
	default:
		return randString(rng)
	}
}

func randString(rng *rand.Rand) string {
	alphabet := []string{"a", "fs/", "read", "\"", "\\", "<", "é", "\x01", "\u2028", " ", "0"}
	s := ""
	for range rng.IntN(5) {
		s += alphabet[rng.IntN(len(alphabet))]
	}
	return s
}

// The three entries of a quick call are written as AddBehind writes them,
// byte for byte, one after another in the same journal (so the encoder's
// caches carry over between the two ways as they would in a session).
func TestQuickCallEncoding(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	stQ, stE := store.NewMemory(), store.NewMemory()
	jq, je := OpenJournal(stQ, "s", "i"), OpenJournal(stE, "s", "i")
	for round := range 3000 {
		q := &QuickCall{Path: []string{"fs/read", "fs/read", "web/<get>", "x", ""}[rng.IntN(5)],
			CallID: []string{"", "i-1/c" + strconv.Itoa(round), "c\"" + randString(rng)}[rng.IntN(3)],
			Status: []Status{"ok", "failed", ""}[rng.IntN(3)], Args: randPlain(rng, 0), Gen: rng.IntN(3)}
		if rng.IntN(3) == 0 {
			q.Error = "core: " + randString(rng)
		} else {
			q.Result = randPlain(rng, 0)
		}
		if err := jq.AddQuickBehind(q); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		je.AddBehind(QuickEntries(q)...)
		if round%100 == 99 {
			if err := jq.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if err := je.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := jq.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := je.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	log := LogName("s", "i")
	got, err := stQ.Read(ctx, log, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, err := stE.Read(ctx, log, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(got) != 9000 {
		t.Fatalf("%d entries, want %d (9000)", len(got), len(want))
	}
	for k := range got {
		if string(got[k].Data) != string(want[k].Data) {
			t.Fatalf("entry %d:\n got %s\nwant %s", k, got[k].Data, want[k].Data)
		}
	}
}

// A quick call whose value has no JSON form is refused, nothing of it is
// added, and the journal goes on.
func TestQuickCallUnencodable(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	j := OpenJournal(st, "s", "i")
	for _, q := range []*QuickCall{
		{Path: "fs/read", Status: "ok", Result: map[string]any{"n": math.NaN()}},
		{Path: "fs/read", Status: "ok", Args: []any{math.Inf(1)}, Result: "fine"},
	} {
		err := j.AddQuickBehind(q)
		var ee *EncodeError
		if !errors.As(err, &ee) || ee.Field == "" || !strings.Contains(err.Error(), "has no JSON form") {
			t.Fatalf("%+v: %v, want an *EncodeError naming the field", q, err)
		}
	}
	if err := j.AddQuickBehind(&QuickCall{Path: "fs/read", Status: "ok", Args: "x", Result: "y", CallID: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := j.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	es, err := j.Entries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 || es[2].Type != Tool || es[2].Result != "y" || es[1].Value != "y" || es[0].Type != Floor {
		t.Fatalf("entries: %+v", es)
	}
}
