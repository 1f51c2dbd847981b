package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/attune-dev/attune/internal/lua"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

// Instance kinds (docs/rules.md, Words).
const (
	KindForeground = "foreground"
	KindBot        = "bot"
	KindOneshot    = "oneshot"
	KindChild      = "child"
)

// StartOptions create or bring back an instance.
type StartOptions struct {
	// ID names the instance; a stored pin for that id wins (R2.1).
	ID string
	// Bot is the configured bot; required for a new instance.
	Bot string
	// Kind is foreground (default), bot, oneshot or child.
	Kind string
	// Session names the session; empty: the stored one, else a new one.
	Session string
	// Parent is the spawning instance of a child.
	Parent string
	// Role of a child: worker or examiner.
	Role string
}

// instanceRecord is what the store keeps of an instance.
type instanceRecord struct {
	Bot     string   `json:"bot"`
	Kind    string   `json:"kind"`
	Role    string   `json:"role,omitempty"`
	Session string   `json:"session"`
	Parent  string   `json:"parent,omitempty"`
	Lineage []string `json:"lineage,omitempty"`
}

// Instance is one running agent. Its methods are safe for concurrent use;
// boundaries of one instance are serialized.
type Instance struct {
	e    *Engine
	rec  instanceRecord
	id   string
	idLV lua.LValue // id, boxed once
	// session and bot, boxed once for boundary records
	sessLV, botLV lua.LValue
	bot           *config.Bot

	scopes  scopeSlab  // the call scopes of calls from the host
	mu      sync.Mutex // boundaries, attune, hydrate
	cur     atomic.Pointer[regSet]
	pending *regSet // re-attuned selection, applied at the next turn start
	turnSet *regSet // the set the open turn started with

	ceiling map[string]bool
	nonce   string
	// callPrefix is "id:nonce:", the start of every call id newCallID makes
	callPrefix string
	callSeq    atomic.Int64
	sess       atomic.Pointer[sessionState] // replaced by hydrate and rollback
	closed     atomic.Bool
}

// ID returns the instance id.
func (i *Instance) ID() string { return i.id }

// Session returns the instance's session id.
func (i *Instance) Session() string { return i.rec.Session }

// Bot returns the instance's bot name.
func (i *Instance) Bot() string { return i.rec.Bot }

// Pin returns the pin the instance runs now.
func (i *Instance) Pin() *pin.Pin { return i.cur.Load().pin }

// Start creates an instance, or brings back a stored one (its pin wins).
func (e *Engine) Start(ctx context.Context, o StartOptions) (*Instance, error) {
	if o.ID == "" {
		return nil, errorf(CodeInvalid, "start: an instance needs an id")
	}
	if old, ok := e.Instance(o.ID); ok {
		return nil, errorf(CodeAlreadyRunning, "start: instance %s is already running (restart it to bring it back from the store)", old.id)
	}
	rec, err := e.loadRecord(ctx, o.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if o.Bot == "" {
			return nil, errorf(CodeInvalid, "start: instance %s is new and needs a bot", o.ID)
		}
		rec = &instanceRecord{Bot: o.Bot, Kind: o.Kind, Role: o.Role, Session: o.Session, Parent: o.Parent}
		switch rec.Kind {
		case "":
			rec.Kind = KindForeground
		case KindForeground, KindBot, KindOneshot, KindChild:
		default:
			return nil, errorf(CodeInvalid, "start: instance %s: kind %q is not one of %s, %s, %s, %s", o.ID, o.Kind, KindForeground, KindBot, KindOneshot, KindChild)
		}
		if o.Parent != "" {
			if _, live := e.Instance(o.Parent); !live {
				if _, err := e.loadRecord(ctx, o.Parent); errors.Is(err, store.ErrNotFound) {
					return nil, errorf(CodeInvalid, "start: instance %s: parent %s is no instance (neither running nor stored)", o.ID, o.Parent)
				}
			}
		}
		if rec.Session == "" {
			rec.Session = e.nextID(o.ID + "/s")
		}
	case err != nil:
		return nil, err
	default:
		if o.Bot != "" && o.Bot != rec.Bot {
			return nil, errorf(CodeInvalid, "start: instance %s runs bot %s, not %s", o.ID, rec.Bot, o.Bot)
		}
		if o.Session != "" {
			rec.Session = o.Session
		}
	}
	if o.Parent != "" && rec.Lineage == nil {
		if p, ok := e.Instance(o.Parent); ok {
			rec.Lineage = append([]string(nil), p.rec.Lineage...)
		}
	}
	return e.open(ctx, o.ID, rec)
}

func (e *Engine) loadRecord(ctx context.Context, id string) (*instanceRecord, error) {
	data, err := e.st.GetRecord(ctx, "instance", id)
	if err != nil {
		return nil, err
	}
	var rec instanceRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("instance %s: stored record: %w", id, err)
	}
	return &rec, nil
}

// open loads (or resolves and stores) the pin, builds the registries and
// registers the instance as live.
func (e *Engine) open(ctx context.Context, id string, rec *instanceRecord) (*Instance, error) {
	bot, ok := e.cfg.Bots[rec.Bot]
	if !ok {
		return nil, errorf(CodeUnknownBot, "start %s: no bot named %s in %s", id, rec.Bot, cfgName(e.cfg))
	}
	if err := e.lease(ctx, id); err != nil {
		return nil, err
	}
	p, err := pin.Load(ctx, e.st, id)
	if errors.Is(err, store.ErrNotFound) {
		p, err = e.resolve(ctx, bot)
		if err != nil {
			return nil, wrapErr(CodeProgram, err, "start "+id)
		}
		if err := pin.Save(ctx, e.st, id, p); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	i := &Instance{e: e, rec: *rec, id: id, idLV: lua.LString(id), sessLV: lua.LString(rec.Session), botLV: lua.LString(rec.Bot), bot: bot, ceiling: map[string]bool{},
		nonce: strconv.FormatInt(time.Now().UnixNano(), 36)}
	i.callPrefix = i.id + ":" + i.nonce + ":"
	for _, c := range bot.Ceiling {
		i.ceiling[c] = true
	}
	set, err := e.newSet(ctx, i, p)
	if err != nil {
		return nil, wrapErr(CodeProgram, err, "start "+id)
	}
	i.cur.Store(set)
	e.feed.watch(ctx, set)
	data, _ := json.Marshal(rec)
	if old, err := e.st.GetRecord(ctx, "instance", id); err != nil || !bytes.Equal(old, data) { // a restart writes nothing
		if err := e.st.PutRecord(ctx, "instance", id, data); err != nil {
			set.release()
			return nil, err
		}
	}
	sess, err := e.openSession(ctx, i)
	i.sess.Store(sess)
	if err != nil {
		set.release()
		return nil, err
	}
	if err := i.restorePins(ctx); err != nil { // R2.5, R3.11: pinning.go
		i.cur.Load().release()
		return nil, err
	}
	set = i.cur.Load()
	if i.sess.Load().inTurn && set.acquire() { // brought back in the middle of a turn
		i.turnSet = set
	}
	e.mu.Lock()
	if _, dup := e.instances[id]; dup {
		e.mu.Unlock()
		set.release()
		if i.pending != nil {
			i.pending.release()
		}
		return nil, errorf(CodeAlreadyRunning, "start: instance %s is already running", id)
	}
	e.instances[id] = i
	e.mu.Unlock()
	return i, nil
}

func cfgName(c *config.Config) string {
	if c.File == "" {
		return "the configuration"
	}
	return c.File
}

// resolve computes the authored selection of a bot (R2.2).
func (e *Engine) resolve(ctx context.Context, bot *config.Bot) (*pin.Pin, error) {
	return pin.Resolve(ctx, e.st, e.packs, bot.Name, bot.Behaviors, bot.Config)
}

// Restart drops the live instance and brings it back from the store.
func (e *Engine) Restart(ctx context.Context, id string) (*Instance, error) {
	if i, ok := e.Instance(id); ok {
		i.Stop()
	}
	rec, err := e.loadRecord(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errorf(CodeInvalid, "restart: no instance %s in the store (start it with a bot first): %w", id, err)
	}
	if err != nil {
		return nil, wrapErr(CodeStore, err, "restart "+id)
	}
	return e.open(ctx, id, rec)
}

// Stop drops a live instance; its stored pin, journal and owners stay.
func (i *Instance) Stop() {
	i.e.mu.Lock()
	if i.e.instances[i.id] == i {
		delete(i.e.instances, i.id)
	}
	i.e.mu.Unlock()
	i.release()
}

func (i *Instance) release() {
	if i.closed.Swap(true) {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if ss := i.sess.Load(); ss != nil {
		_ = ss.flush(context.Background())
	}
	if s := i.cur.Swap(nil); s != nil {
		s.release()
	}
	if i.pending != nil {
		i.pending.release()
		i.pending = nil
	}
}

// live returns the current set with a reference held for one call, or an
// error when the instance is stopped.
func (i *Instance) live() (*regSet, error) {
	for {
		s := i.cur.Load()
		if s == nil {
			return nil, errorf(CodeNotRunning, "instance %s is not running", i.id)
		}
		if s.acquire() {
			return s, nil
		}
	}
}

// Attune re-pins the instance to the current authored selection; the new
// pin applies when the next turn starts (R2.5).
func (i *Instance) Attune(ctx context.Context) error {
	if i.closed.Load() {
		return errorf(CodeNotRunning, "instance %s is not running", i.id)
	}
	bot, ok := i.e.cfg.Bots[i.rec.Bot]
	if !ok {
		return errorf(CodeUnknownBot, "attune %s: no bot named %s", i.id, i.rec.Bot)
	}
	p, err := i.e.resolve(ctx, bot)
	if err != nil {
		return wrapErr(CodeProgram, err, "attune "+i.id)
	}
	set, err := i.e.newSet(ctx, i, p)
	if err != nil {
		return wrapErr(CodeProgram, err, "attune "+i.id)
	}
	if err := i.e.savePending(ctx, i.id, p); err != nil { // applied at the next turn start (pinning.go)
		set.release()
		return err
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.pending != nil {
		i.pending.release()
	}
	i.pending = set
	return nil
}

// applyPending swaps in a re-attuned set; the caller holds i.mu.
func (i *Instance) applyPending() {
	if i.pending == nil {
		return
	}
	old := i.cur.Swap(i.pending)
	i.e.feed.watch(context.Background(), i.pending)
	i.pending = nil
	if old != nil {
		old.release()
	}
}

// newCallID returns a fresh call id for this instance, unique across
// restarts (the nonce is taken when the instance is opened).
func (i *Instance) newCallID() string {
	var b [64]byte // one allocation, the string, for ids of up to 64 bytes
	return string(strconv.AppendInt(append(b[:0], i.callPrefix...), i.callSeq.Add(1), 10))
}

// Instances returns the ids of live instances, sorted.
func (e *Engine) Instances() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.instances))
	for id := range e.instances {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
