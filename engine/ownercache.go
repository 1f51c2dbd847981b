package engine

// The owner cache and owner logs: where each owner's log lives in the store
// (owner/SCOPE/KEY/NAME), the ABI an opened owner keeps (R2.8, R2.9), the
// fold snapshots, and the rollback of session owners.
//
// Rollback. Session owners roll back with their session: sessionRevs lists
// their revisions at a turn end, truncateSessionOwners truncates them back
// (R5.9). Project and global owner logs are never truncated.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// ownerLog names an owner's log in the store.
func ownerLog(scope, key, name string) string {
	return "owner/" + scope + "/" + key + "/" + name
}

func (e *Engine) project() string {
	if p := e.cfg.Engine.Project; p != "" {
		return p
	}
	return "default"
}

// ownerCache is the engine's memory of owners: the ABI each opened owner
// keeps, and the fold snapshots. Safe for concurrent use; no lock is held
// across a fold. Both are caches: what they drop is read or folded again.
type ownerCache struct {
	abi      sync.Map // log -> string
	abiCount atomic.Int64
	logs     sync.Map // log -> *logSnaps
	count    atomic.Int64
}

// Bounds of the caches; past them, entries are dropped.
const (
	maxSnapshots = 1 << 14
	maxABIs      = 1 << 16
)

type logSnaps struct {
	mu  sync.Mutex
	gen uint64 // bumped when the log is truncated: older folds may not store
	by  map[string]*snapshot
}

type snapshot struct {
	state any // plain data, never changed once stored
	rev   int64
}

// snapRef names the cache entry a fold started from.
type snapRef struct {
	ls  *logSnaps
	gen uint64
}

func newOwnerCache() *ownerCache { return &ownerCache{} }

func (c *ownerCache) snaps(log string) *logSnaps {
	if v, ok := c.logs.Load(log); ok {
		return v.(*logSnaps)
	}
	v, loaded := c.logs.LoadOrStore(log, &logSnaps{by: map[string]*snapshot{}})
	if !loaded && c.count.Add(1) > maxSnapshots {
		c.evict(log)
	}
	return v.(*logSnaps)
}

// get returns the snapshot of (log, key) and where it came from.
func (c *ownerCache) get(log, key string) (*snapshot, snapRef) {
	ls := c.snaps(log)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.by[key], snapRef{ls, ls.gen}
}

// put keeps a newer snapshot, unless the log was truncated (or dropped
// from the cache) since ref was taken.
func (c *ownerCache) put(log, key string, ref snapRef, sn *snapshot) {
	if cur, ok := c.logs.Load(log); !ok || cur.(*logSnaps) != ref.ls {
		return
	}
	ls := ref.ls
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.gen != ref.gen {
		return
	}
	if old := ls.by[key]; old != nil && old.rev >= sn.rev {
		return
	}
	ls.by[key] = sn
}

// evict drops a quarter of the logs' snapshots, keep excepted.
func (c *ownerCache) evict(keep string) {
	n := int64(0)
	c.logs.Range(func(k, _ any) bool {
		if k.(string) != keep {
			c.logs.Delete(k)
			c.count.Add(-1)
			n++
		}
		return n < maxSnapshots/4
	})
}

// invalidate forgets every snapshot of a log (after a truncation).
func (c *ownerCache) invalidate(log string) {
	ls := c.snaps(log)
	ls.mu.Lock()
	ls.by = map[string]*snapshot{}
	ls.gen++
	ls.mu.Unlock()
}

// rememberABI caches the ABI an owner keeps.
func (c *ownerCache) rememberABI(log, abi string) {
	if _, loaded := c.abi.Swap(log, abi); !loaded && c.abiCount.Add(1) > maxABIs {
		c.abi.Range(func(k, _ any) bool {
			if k.(string) != log {
				c.abi.Delete(k)
				c.abiCount.Add(-1)
			}
			return c.abiCount.Load() > maxABIs/2
		})
	}
}

// ownerMeta is the value of an owner's metadata record.
type ownerMeta struct {
	ABI string `json:"abi"`
}

// openOwner opens an owner (R2.9): it creates the metadata record when the
// owner is new and returns the ABI the owner keeps (R2.8).
func (e *Engine) openOwner(ctx context.Context, o ownerRef) (string, error) {
	if v, ok := e.owners.abi.Load(o.log); ok {
		abi := v.(string)
		if abi == o.rd.abi {
			return abi, nil
		}
		// Another host may have upgraded it: read it again before refusing.
		return e.readOwnerABI(ctx, o)
	}
	val, _ := json.Marshal(ownerMeta{ABI: o.rd.abi})
	stored, _, err := e.st.PutRecordIfAbsent(ctx, "owner", o.log, val)
	if err != nil {
		return "", err
	}
	return e.learnOwnerABI(o, stored)
}

func (e *Engine) readOwnerABI(ctx context.Context, o ownerRef) (string, error) {
	data, err := e.st.GetRecord(ctx, "owner", o.log)
	if err != nil {
		return "", err
	}
	return e.learnOwnerABI(o, data)
}

// learnOwnerABI decodes an owner's stored metadata record and remembers
// the ABI it keeps.
func (e *Engine) learnOwnerABI(o ownerRef, data []byte) (string, error) {
	var m ownerMeta
	if err := json.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("owner %s: metadata record: %w", o.addr, err)
	}
	e.owners.rememberABI(o.log, m.ABI)
	return m.ABI, nil
}

// abiRefusal is the reason of an ABI refusal, or "" when the ABIs agree.
func abiRefusal(o ownerRef, stored string) string {
	if stored == o.rd.abi {
		return ""
	}
	return fmt.Sprintf("owner %s keeps ABI %q; the pinned reducer (%s) declares ABI %q (the host upgrades an owner's ABI explicitly)", o.addr, stored, o.rd.pos, o.rd.abi)
}

// UpgradeOwnerABI sets an owner's ABI to the one the instance's pinned
// reducer declares (R2.8): the only way an existing owner's ABI changes.
func (e *Engine) UpgradeOwnerABI(ctx context.Context, instance, owner string) error {
	i, ok := e.Instance(instance)
	if !ok {
		return fmt.Errorf("upgrade %s: instance %s is not running", owner, instance)
	}
	set, o, err := i.liveOwner(owner)
	if err != nil {
		return err
	}
	defer set.release()
	val, _ := json.Marshal(ownerMeta{ABI: o.rd.abi})
	if err := e.st.PutRecord(ctx, "owner", o.log, val); err != nil {
		return err
	}
	e.owners.rememberABI(o.log, o.rd.abi)
	return nil
}

// sessionOwnerLogs lists the logs of a session's owners.
func (e *Engine) sessionOwnerLogs(ctx context.Context, session string) ([]string, error) {
	prefix := "owner/" + ScopeSession + "/" + session + "/"
	keys, err := e.st.ListRecords(ctx, "owner", prefix)
	if err != nil {
		return nil, err
	}
	out := keys[:0]
	for _, k := range keys {
		if !strings.Contains(k[len(prefix):], "/") { // not a session whose id extends this one
			out = append(out, k)
		}
	}
	return out, nil
}

// sessionRevs returns the revisions of this session's owners, by log name
// (recorded at every turn end for rollback, R5.9).
func (i *Instance) sessionRevs(ctx context.Context) (map[string]int64, error) {
	logs, err := i.e.sessionOwnerLogs(ctx, i.rec.Session)
	if err != nil {
		return nil, err
	}
	revs := make(map[string]int64, len(logs))
	for _, log := range logs {
		n, err := i.e.st.Length(ctx, log)
		if err != nil {
			return nil, err
		}
		revs[log] = n
	}
	return revs, nil
}

// truncateSessionOwners rolls this session's owners back to revs (R5.9):
// each session owner log is truncated to its recorded revision, one not in
// revs (opened later) to 0. Project and global owners are never touched.
func (i *Instance) truncateSessionOwners(ctx context.Context, revs map[string]int64) error {
	logs, err := i.e.sessionOwnerLogs(ctx, i.rec.Session)
	if err != nil {
		return err
	}
	prefix := "owner/" + ScopeSession + "/"
	for _, log := range logs {
		if !strings.HasPrefix(log, prefix) {
			continue
		}
		err := i.e.st.Truncate(ctx, log, max(revs[log], 0))
		i.e.owners.invalidate(log)
		if err != nil {
			return err
		}
	}
	return nil
}

// truncateOwners is the rollback's side of owners (R5.9).
func truncateOwners(ctx context.Context, i *Instance, revs map[string]int64) error {
	return i.truncateSessionOwners(ctx, revs)
}
