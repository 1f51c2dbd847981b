package engine

import (
	"context"
	"errors"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/store"
)

// Store is where an engine keeps its records, logs and calls. Hosts name
// one through the engine (Options.Store, OpenStore, NewMemoryStore),
// never the store package.
type Store = store.Store

// OpenStore opens the store cfg names (engine.store), as New does when
// Options.Store is nil; the caller closes it.
func OpenStore(ctx context.Context, cfg *config.Config) (Store, error) {
	kind, target, err := config.ParseStore(cfg.Engine.Store, cfg.Dir)
	if err != nil {
		return nil, err
	}
	if kind == config.StorePostgres {
		target = cfg.Engine.PostgresTarget(target)
	}
	return store.Open(ctx, kind, target)
}

// NewMemoryStore is an empty store in memory (a dry run, a test).
func NewMemoryStore() Store { return store.NewMemory() }

// ScratchStore is a store that reads base and writes only to memory:
// what a dry run (`attune explain`, a replay of a stored session) runs
// against, so that base is never changed. Closing it closes nothing of
// base.
func ScratchStore(base Store) Store { return store.Scratch(base) }

// SessionFlag is what a harness keeps of a session between its events,
// beside the session's instance: each is one text, or none.
type SessionFlag string

// The session flags.
const (
	// FlagFresh: the session's next turn is context_fresh (the agent
	// compacted or cleared its context).
	FlagFresh SessionFlag = "fresh"
	// FlagContinued: the text a blocked stop gave the agent, which a
	// harness that submits it as the next prompt sends back (that prompt
	// continues the activated round, not a new turn).
	FlagContinued SessionFlag = "continued"
)

// harnessRecords is the store's kind of the session flags' records.
const harnessRecords = "hook"

// SetFlag sets flag f of session (an instance id) to text.
func (e *Engine) SetFlag(ctx context.Context, session string, f SessionFlag, text string) error {
	return e.st.PutRecord(ctx, harnessRecords, session+"/"+string(f), []byte(text))
}

// Flag is flag f of session: its text, and whether it is set.
func (e *Engine) Flag(ctx context.Context, session string, f SessionFlag) (string, bool, error) {
	data, err := e.st.GetRecord(ctx, harnessRecords, session+"/"+string(f))
	if errors.Is(err, store.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(data), true, nil
}

// ClearFlag unsets flag f of session.
func (e *Engine) ClearFlag(ctx context.Context, session string, f SessionFlag) error {
	return e.st.DeleteRecord(ctx, harnessRecords, session+"/"+string(f))
}

// Stored reports whether an instance id was started before: its record
// is in the store (it is brought back with its bot and pin; a new one
// takes the bot it is started with).
func (e *Engine) Stored(ctx context.Context, id string) (bool, error) {
	_, err := e.st.GetRecord(ctx, "instance", id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
