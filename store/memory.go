package store

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// Memory is a Store held in memory, for tests: nothing survives the process.
// Every slice is copied on the way in and on the way out. The zero value is
// not usable; call NewMemory. A Memory is safe for concurrent use.
type Memory struct {
	mu      sync.RWMutex
	blobs   map[string][]byte
	records map[recordID][]byte
	logs    map[string]*memLog
	// keys indexes the records' keys by kind, so ListRecords costs the
	// keys it returns, not every record of the store (a turn end lists
	// its session's owners: with 100k live instances a scan of the map
	// cost 16 ms)
	keys map[string]*keyIndex
	feed localFeed // Watch
}

type recordID struct{ kind, key string }

// keyIndex is the sorted keys of one kind. Keys added since the last
// listing wait in added (an instance start adds one without sorting);
// the next listing merges them in.
type keyIndex struct {
	sorted []string
	added  []string
}

func (x *keyIndex) add(key string) { x.added = append(x.added, key) }

func (x *keyIndex) remove(key string) {
	if k, ok := slices.BinarySearch(x.sorted, key); ok {
		x.sorted = slices.Delete(x.sorted, k, k+1)
		return
	}
	if k := slices.Index(x.added, key); k >= 0 {
		x.added = slices.Delete(x.added, k, k+1)
	}
}

// merge sorts the added keys into sorted.
func (x *keyIndex) merge() {
	if len(x.added) == 0 {
		return
	}
	slices.Sort(x.added)
	merged := make([]string, 0, len(x.sorted)+len(x.added))
	a, b := x.sorted, x.added
	for len(a) > 0 && len(b) > 0 {
		if a[0] < b[0] {
			merged, a = append(merged, a[0]), a[1:]
		} else {
			merged, b = append(merged, b[0]), b[1:]
		}
	}
	x.sorted, x.added = append(append(merged, a...), b...), x.added[:0]
}

// prefixed returns the sorted keys that start with prefix; merged.
func (x *keyIndex) prefixed(prefix string) []string {
	from, _ := slices.BinarySearch(x.sorted, prefix)
	to := from
	for to < len(x.sorted) && strings.HasPrefix(x.sorted[to], prefix) {
		to++
	}
	return append([]string(nil), x.sorted[from:to]...)
}

// index is the key index of kind, made on first use; m.mu held for writing.
func (m *Memory) index(kind string) *keyIndex {
	x := m.keys[kind]
	if x == nil {
		x = &keyIndex{}
		m.keys[kind] = x
	}
	return x
}

type memLog struct {
	entries memEntries
	calls   map[string]CallRecord
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty Memory store.
func NewMemory() *Memory {
	return &Memory{
		blobs:   make(map[string][]byte),
		records: make(map[recordID][]byte),
		logs:    make(map[string]*memLog),
		keys:    make(map[string]*keyIndex),
	}
}

// PutBlob implements Store.
func (m *Memory) PutBlob(ctx context.Context, data []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	sha := blobHash(data)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.blobs[sha]; !ok {
		m.blobs[sha] = clone(data)
	}
	return sha, nil
}

// GetBlob implements Store.
func (m *Memory) GetBlob(ctx context.Context, sha string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	data, ok := m.blobs[sha]
	if !ok {
		return nil, blobNotFound(sha)
	}
	return clone(data), nil
}

// DeleteBlob implements Store.
func (m *Memory) DeleteBlob(ctx context.Context, sha string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.blobs, sha)
	return nil
}

// GetRecord implements Store.
func (m *Memory) GetRecord(ctx context.Context, kind, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	v, ok := m.records[recordID{kind, key}]
	if !ok {
		return nil, recordNotFound(kind, key)
	}
	return clone(v), nil
}

// PutRecord implements Store.
func (m *Memory) PutRecord(ctx context.Context, kind, key string, value []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id := recordID{kind, key}
	if _, ok := m.records[id]; !ok {
		m.index(kind).add(key)
	}
	m.records[id] = clone(value)
	return nil
}

// PutRecordIfAbsent implements Store.
func (m *Memory) PutRecordIfAbsent(ctx context.Context, kind, key string, value []byte) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id := recordID{kind, key}
	if v, ok := m.records[id]; ok {
		return clone(v), false, nil
	}
	m.index(kind).add(key)
	m.records[id] = clone(value)
	return clone(value), true, nil
}

// DeleteRecord implements Store.
func (m *Memory) DeleteRecord(ctx context.Context, kind, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id := recordID{kind, key}
	if _, ok := m.records[id]; ok {
		m.index(kind).remove(key)
		delete(m.records, id)
	}
	return nil
}

// ListRecords implements Store.
func (m *Memory) ListRecords(ctx context.Context, kind, prefix string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	x := m.keys[kind]
	if x == nil {
		m.mu.RUnlock()
		return nil, nil
	}
	if len(x.added) == 0 {
		defer m.mu.RUnlock()
		return x.prefixed(prefix), nil
	}
	m.mu.RUnlock()
	m.mu.Lock() // keys were added since the last listing: merge them in
	defer m.mu.Unlock()
	x.merge()
	return x.prefixed(prefix), nil
}

// Append implements Store.
func (m *Memory) Append(ctx context.Context, log string, expected int64, entries [][]byte, call *CallRecord) (int64, error) {
	if err := checkAppend(expected, call); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.logs[log]
	var n int64
	if l != nil {
		n = l.entries.len()
	}
	if call != nil && l != nil { // R5.6: the call id first
		if stored, ok := l.calls[call.ID]; ok {
			return n, checkCall(log, cloneCall(stored), call)
		}
	}
	if expected != Any && expected != n { // R5.5
		return n, staleError(log, n, expected)
	}
	if len(entries) == 0 && call == nil {
		return n, nil
	}
	if l == nil {
		l = &memLog{calls: make(map[string]CallRecord)}
		m.logs[log] = l
	}
	for _, e := range entries {
		l.entries.add(e)
	}
	n = l.entries.len()
	if call != nil {
		rec := cloneCall(*call)
		rec.Revision = n
		l.calls[call.ID] = rec
	}
	if len(entries) > 0 {
		m.feed.publish(log, n)
	}
	return n, nil
}

var _ Watcher = (*Memory)(nil)

// Watch implements Watcher: every append of this Memory is announced.
func (m *Memory) Watch(ctx context.Context, fn func(log string, n int64)) error {
	m.feed.watch(ctx, fn, 0)
	return nil
}

// Read implements Store.
func (m *Memory) Read(ctx context.Context, log string, after int64, limit int) ([]Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	l := m.logs[log]
	if l == nil {
		return nil, nil
	}
	after = max(after, 0)
	n := l.entries.len()
	if after >= n {
		return nil, nil
	}
	if limit > 0 && int64(limit) < n-after {
		n = after + int64(limit)
	}
	return l.entries.read(after, n), nil
}

// Length implements Store.
func (m *Memory) Length(ctx context.Context, log string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if l := m.logs[log]; l != nil {
		return l.entries.len(), nil
	}
	return 0, nil
}

// Truncate implements Store.
func (m *Memory) Truncate(ctx context.Context, log string, n int64) error {
	if err := checkTruncate(n); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.logs[log]
	if l == nil {
		return nil
	}
	l.entries.truncate(n)
	for id, c := range l.calls { // R5.9
		if c.Revision > n {
			delete(l.calls, id)
		}
	}
	return nil
}

// DeleteLog implements Store.
func (m *Memory) DeleteLog(ctx context.Context, log string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.logs, log)
	return nil
}

// GetCall implements Store.
func (m *Memory) GetCall(ctx context.Context, log, id string) (CallRecord, error) {
	if err := ctx.Err(); err != nil {
		return CallRecord{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if l := m.logs[log]; l != nil {
		if c, ok := l.calls[id]; ok {
			return cloneCall(c), nil
		}
	}
	return CallRecord{}, callNotFound(log, id)
}

// Close implements Store. It drops everything the store held.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blobs = make(map[string][]byte)
	m.records = make(map[recordID][]byte)
	m.logs = make(map[string]*memLog)
	m.keys = make(map[string]*keyIndex)
	return nil
}
