package engine

// Spawning: a child instance with its own bot's selection and registries
// and a new session, on its parent's lineage (R2.3, R3.12).

import (
	"context"
	"errors"

	"github.com/attune-dev/attune/store"
)

// Kinds of child (R3.12).
const (
	RoleWorker   = "worker"
	RoleExaminer = "examiner"
)

// SpawnOptions name a child instance.
type SpawnOptions struct {
	ID   string
	Bot  string
	Role string // worker (default) or examiner
}

// Spawn starts a child: its own bot's selection and registries (R2.3), a
// new session, and the parent's lineage (R3.12).
func (i *Instance) Spawn(ctx context.Context, o SpawnOptions) (*Instance, error) {
	if i.closed.Load() {
		return nil, errorf(CodeNotRunning, "instance %s is not running", i.id)
	}
	if o.Role == "" {
		o.Role = RoleWorker
	}
	if o.Role != RoleWorker && o.Role != RoleExaminer {
		return nil, errorf(CodeInvalid, "spawn: kind %q: want worker or examiner", o.Role)
	}
	if o.Bot == "" {
		o.Bot = i.rec.Bot
	}
	if o.ID == "" {
		o.ID = i.e.nextID(i.id + "/child")
	}
	lineage := append([]string(nil), i.rec.Lineage...)
	lineage = append(lineage, "spawn:"+i.id)
	rec, err := i.e.loadRecord(ctx, o.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		rec = &instanceRecord{Bot: o.Bot, Kind: KindChild, Role: o.Role, Session: i.e.nextID(o.ID + "/s"), Parent: i.id, Lineage: lineage}
	case err != nil:
		return nil, err
	}
	return i.e.open(ctx, o.ID, rec)
}
