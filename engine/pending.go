package engine

import (
	"context"

	"attune/session"
)

// Temporary bridges while owners land.
var (
	replayMethod   = func(ctx context.Context, i *Instance, en session.Entry) {}
	truncateOwners = func(ctx context.Context, i *Instance, revs map[string]int64) error { return nil }
)
