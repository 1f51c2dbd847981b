package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/attune-dev/attune/store"
)

// Writers of one log queue at its gate across hosts (two stores on one
// database); the gate of another log is free; a released gate lets the
// next one in.
func TestPostgresGate(t *testing.T) {
	url := postgresSchema(t)
	ctx := context.Background()
	var gs []store.Gater
	for range 2 {
		st, err := store.OpenPostgres(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		gs = append(gs, st)
	}
	release, err := gs[0].Gate(ctx, "owner/project/p/ledger")
	if err != nil {
		t.Fatal(err)
	}
	other, err := gs[1].Gate(ctx, "owner/project/p/other")
	if err != nil {
		t.Fatal(err)
	}
	other()
	got := make(chan func(), 1)
	go func() {
		r, err := gs[1].Gate(ctx, "owner/project/p/ledger")
		if err != nil {
			t.Error(err)
			r = func() {}
		}
		got <- r
	}()
	select {
	case <-got:
		t.Fatal("a second host passed a held gate")
	case <-time.After(200 * time.Millisecond):
	}
	release()
	select {
	case r := <-got:
		r()
	case <-time.After(10 * time.Second):
		t.Fatal("the gate was not let go")
	}
}
