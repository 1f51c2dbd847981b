package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/attune-dev/attune/store"
)

// A lease is one holder's until it expires; its holder renews it; a
// second store handle (another host) is refused with the holder named.
func TestPostgresLease(t *testing.T) {
	u := postgresSchema(t)
	ctx := context.Background()
	a, err := store.OpenPostgres(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := store.OpenPostgres(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const ttl = 400 * time.Millisecond
	if err := a.Lease(ctx, "instance/x", "m1", ttl); err != nil {
		t.Fatal(err)
	}
	err = b.Lease(ctx, "instance/x", "m2", ttl)
	var held *store.LeaseHeldError
	if !errors.As(err, &held) || !errors.Is(err, store.ErrLeaseHeld) || held.Holder != "m1" || held.Key != "instance/x" ||
		held.Expires.Before(time.Now().Add(-time.Minute)) {
		t.Fatalf("m2 while m1 holds it: %v", err)
	}
	if err := b.Lease(ctx, "instance/y", "m2", ttl); err != nil {
		t.Fatalf("another key: %v", err)
	}
	for range 3 { // renewed by its holder, from any handle
		time.Sleep(ttl / 2)
		if err := b.Lease(ctx, "instance/x", "m1", ttl); err != nil {
			t.Fatalf("renewal: %v", err)
		}
	}
	if err := b.Lease(ctx, "instance/x", "m2", ttl); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("m2 after renewals: %v", err)
	}
	time.Sleep(ttl + 100*time.Millisecond)
	if err := b.Lease(ctx, "instance/x", "m2", ttl); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if err := a.Lease(ctx, "instance/x", "m1", ttl); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("m1 after m2 took it: %v", err)
	}
}
