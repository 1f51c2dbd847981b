package inspect

import (
	"context"
	"testing"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/store"
)

func BenchmarkZZSQLite(b *testing.B) {
	ctx := context.Background()
	st, err := store.Open(ctx, config.StoreSQLite, "/tmp/bigsess/state.db")
	if err != nil { b.Fatal(err) }
	defer st.Close()
	for range b.N {
		t, err := Load(ctx, st, "big")
		if err != nil { b.Fatal(err) }
		if _, err := t.JSON(); err != nil { b.Fatal(err) }
	}
}
