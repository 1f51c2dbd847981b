package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/attune-dev/attune/store"
)

// CodeInstanceLeased: the instance id is running on another host (its
// lease, on a store several machines share, is another host's and has not
// expired). Give each machine's instances their own ids; an id a crashed
// machine held is free once its lease expires ([engine] instance_lease).
const CodeInstanceLeased Code = "instance-leased"

// defaultLease is [engine] instance_lease's default.
const defaultLease = 15 * time.Second

// Instance leases. On a store that is a store.Leaser (PostgreSQL), an
// instance's id is leased to the engine's host (Identity().Host) when the
// instance starts or restarts, and renewed every third of the lease while
// it is live. Another host starting the id meanwhile gets
// CodeInstanceLeased (errors.Is(err, store.ErrLeaseHeld)); the same host
// may start it again at any time (its processes share the lease: one
// `attune hook` process per event), after a crash too. A lease is never
// given back early: it expires a lease's length after the last renewal.

func (e *Engine) leaseTTL() time.Duration {
	if d := e.cfg.Engine.InstanceLease; d > 0 {
		return d
	}
	return defaultLease
}

// lease takes the lease of instance id for this host, and starts the
// renewals on first use.
func (e *Engine) lease(ctx context.Context, id string) error {
	l, ok := e.st.(store.Leaser)
	if !ok {
		return nil
	}
	host := e.Identity().Host
	err := l.Lease(ctx, "instance/"+id, host, e.leaseTTL())
	var held *store.LeaseHeldError
	if errors.As(err, &held) {
		return &Error{Code: CodeInstanceLeased, Err: err, Message: fmt.Sprintf(
			"start %s: instance %s is running on host %s (its lease lasts until %s unless renewed); this host is %s: give each machine's instances their own ids, or wait for the lease to expire if %s is gone",
			id, id, held.Holder, held.Expires.UTC().Format(time.RFC3339), host, held.Holder)}
	}
	if err != nil {
		return wrapErr(CodeStore, err, "start "+id+": lease")
	}
	e.leaseOnce.Do(func() { go e.renewLeases(l, host) })
	return nil
}

// renewLeases renews the leases of the live instances until the engine
// closes.
func (e *Engine) renewLeases(l store.Leaser, host string) {
	ttl := e.leaseTTL()
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-e.done:
			return
		case <-t.C:
		}
		e.mu.Lock()
		ids := make([]string, 0, len(e.instances))
		for id := range e.instances {
			ids = append(ids, id)
		}
		e.mu.Unlock()
		for _, id := range ids {
			ctx, cancel := context.WithTimeout(context.Background(), ttl/3)
			if err := l.Lease(ctx, "instance/"+id, host, ttl); err != nil {
				e.log.Warn("instance lease not renewed", "instance", id, "host", host, "error", err)
			}
			cancel()
		}
	}
}
