//go:build e2e

package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/store"
)

// leaseEngine opens an engine on storeSpec as host, with leases of 1 s.
func leaseEngine(t *testing.T, storeSpec, host string) *Engine {
	t.Helper()
	dir := t.TempDir()
	toml := "[engine]\nstore = " + jsonString(storeSpec) + "\nproject = \"team\"\ninstance_lease = \"1s\"\n[identity]\nhost = \"" + host + "\"\n[bots.main]\nbehaviors = []\n"
	path := filepath.Join(dir, "attune.toml")
	if err := os.WriteFile(path, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(context.Background(), Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// An instance id is leased to the host that runs it: another host gets
// CodeInstanceLeased while the lease is renewed; the same host starts it
// again at once (a process after a crash); a lease no one renews expires.
func TestInstanceLeasePostgres(t *testing.T) {
	u := pgTestSchema(t)
	ctx := context.Background()
	a := leaseEngine(t, u, "m1")
	if _, err := a.Start(ctx, StartOptions{ID: "x", Bot: "main"}); err != nil {
		t.Fatal(err)
	}
	b := leaseEngine(t, u, "m2")
	check := func(when string) {
		_, err := b.Start(ctx, StartOptions{ID: "x", Bot: "main"})
		var ee *Error
		if !errors.As(err, &ee) || ee.Code != CodeInstanceLeased || !errors.Is(err, store.ErrLeaseHeld) ||
			!strings.Contains(err.Error(), "instance x is running on host m1") || !strings.Contains(err.Error(), "this host is m2") {
			t.Fatalf("%s: another host started x: %v", when, err)
		}
	}
	check("at once")
	time.Sleep(1500 * time.Millisecond) // past the lease: a renews it
	check("after renewals")
	if _, err := b.Start(ctx, StartOptions{ID: "y", Bot: "main"}); err != nil {
		t.Fatalf("another id on m2: %v", err)
	}

	// the same host, another process (a's crash: it never gives the lease back)
	a.Close()
	a2 := leaseEngine(t, u, "m1")
	if _, err := a2.Start(ctx, StartOptions{ID: "x", Bot: "main"}); err != nil {
		t.Fatalf("m1 again: %v", err)
	}
	a2.Close()
	check("m1 gone a moment ago")
	time.Sleep(1200 * time.Millisecond)
	if _, err := b.Start(ctx, StartOptions{ID: "x", Bot: "main"}); err != nil {
		t.Fatalf("after the lease expired: %v", err)
	}
}
