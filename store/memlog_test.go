package store_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/attune-dev/attune/store"
)

// The Memory store's chunked logs: appends of every size (empty, small,
// larger than a chunk), reads of every range and truncations anywhere read
// back exactly what a plain list of the same entries holds.
func TestMemoryLogChunks(t *testing.T) {
	ctx := context.Background()
	m := store.NewMemory()
	r := rand.New(rand.NewPCG(1, 2))
	var want [][]byte
	entry := func() []byte {
		switch r.IntN(20) {
		case 0:
			return []byte{}
		case 1:
			return bytes.Repeat([]byte{byte(r.IntN(256))}, 70_000+r.IntN(1000)) // larger than a chunk
		}
		return []byte(strconv.Itoa(r.Int()) + string(bytes.Repeat([]byte("x"), r.IntN(300))))
	}
	check := func() {
		t.Helper()
		n, err := m.Length(ctx, "l")
		if err != nil || n != int64(len(want)) {
			t.Fatalf("length %d, %v; want %d", n, err, len(want))
		}
		for range 5 {
			after, limit := r.IntN(len(want)+2), r.IntN(50)
			got, err := m.Read(ctx, "l", int64(after), limit)
			if err != nil {
				t.Fatal(err)
			}
			rest := want[min(after, len(want)):]
			if limit > 0 && limit < len(rest) {
				rest = rest[:limit]
			}
			if len(got) != len(rest) {
				t.Fatalf("read after %d limit %d: %d entries, want %d", after, limit, len(got), len(rest))
			}
			for k, e := range got {
				if e.Seq != int64(after+k+1) || e.Data == nil || !bytes.Equal(e.Data, rest[k]) {
					t.Fatalf("read after %d: entry %d is seq %d %.20q, want seq %d %.20q", after, k, e.Seq, e.Data, after+k+1, rest[k])
				}
			}
		}
	}
	for round := range 300 {
		batch := make([][]byte, r.IntN(40))
		for k := range batch {
			batch[k] = entry()
		}
		if _, err := m.Append(ctx, "l", int64(len(want)), batch, nil); err != nil {
			t.Fatal(err)
		}
		for _, e := range batch {
			want = append(want, bytes.Clone(e))
			copy(e, "changed") // the store kept a copy
		}
		check()
		if round%7 == 0 {
			n := r.IntN(len(want) + 3)
			if err := m.Truncate(ctx, "l", int64(n)); err != nil {
				t.Fatal(err)
			}
			want = want[:min(n, len(want))]
			check()
		}
	}
}
