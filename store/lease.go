package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrLeaseHeld: the lease is held by another holder and has not expired.
// The error is a *LeaseHeldError naming the holder.
var ErrLeaseHeld = errors.New("lease held by another holder")

// LeaseHeldError is returned (wrapping ErrLeaseHeld) by Lease when another
// holder holds the key.
type LeaseHeldError struct {
	Key     string
	Holder  string
	Expires time.Time // by the store's clock
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("store: %s is leased to %s until %s", e.Key, e.Holder, e.Expires.UTC().Format(time.RFC3339))
}
func (e *LeaseHeldError) Unwrap() error { return ErrLeaseHeld }

// Leaser is implemented by stores several machines share (Postgres): a key
// (an instance id) is leased to one holder (a host) at a time, for a while.
//
// Lease takes the lease of key for holder, or renews it, until ttl from
// now by the store's clock: it succeeds when no one holds it, when its
// holder's lease has expired, or when holder holds it already; otherwise
// it returns a *LeaseHeldError. A holder that stops renewing (its process
// crashed) loses the lease when it expires. Leases are kept as records of
// kind "lease".
type Leaser interface {
	Lease(ctx context.Context, key, holder string, ttl time.Duration) error
}
