package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/attune-dev/attune/session"
	"github.com/attune-dev/attune/store"
)

// SessionInfo is one session of a store: its instances, as ListSessions
// finds them (the journals are not read).
type SessionInfo struct {
	Session   string
	Instances []InstanceInfo // sorted by id
}

// InstanceInfo is one instance of a session.
type InstanceInfo struct {
	ID, Bot, Kind, Role, Parent string
}

// ListSessions returns the sessions of a store, sorted by id, with their
// instances. It reads the instance records only.
func ListSessions(ctx context.Context, st store.Store) ([]SessionInfo, error) {
	keys, recs, err := instanceRecords(ctx, st)
	if err != nil {
		return nil, err
	}
	by := map[string]*SessionInfo{}
	for _, k := range keys {
		rec := recs[k]
		s := by[rec.Session]
		if s == nil {
			s = &SessionInfo{Session: rec.Session}
			by[rec.Session] = s
		}
		s.Instances = append(s.Instances, InstanceInfo{ID: k, Bot: rec.Bot, Kind: rec.Kind, Role: rec.Role, Parent: rec.Parent})
	}
	out := make([]SessionInfo, 0, len(by))
	for _, s := range by {
		sort.Slice(s.Instances, func(a, b int) bool { return s.Instances[a].ID < s.Instances[b].ID })
		out = append(out, *s)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Session < out[b].Session })
	return out, nil
}

// JournalLength is how many entries an instance's journal of a session holds.
func JournalLength(ctx context.Context, st store.Store, sess, instance string) (int64, error) {
	return st.Length(ctx, session.LogName(sess, instance))
}

// instanceRecords reads every instance record of a store: their ids,
// sorted, and the records by id.
func instanceRecords(ctx context.Context, st store.Store) ([]string, map[string]instanceRecord, error) {
	keys, err := st.ListRecords(ctx, "instance", "")
	if err != nil {
		return nil, nil, err
	}
	recs := make(map[string]instanceRecord, len(keys))
	for _, k := range keys {
		data, err := st.GetRecord(ctx, "instance", k)
		if err != nil {
			return nil, nil, err
		}
		var rec instanceRecord
		if err := json.Unmarshal(data, &rec); err != nil {
			return nil, nil, fmt.Errorf("instance %s: stored record: %w", k, err)
		}
		recs[k] = rec
	}
	return keys, recs, nil
}
