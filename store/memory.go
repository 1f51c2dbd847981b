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
}

type recordID struct{ kind, key string }

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
	m.records[recordID{kind, key}] = clone(value)
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
	delete(m.records, recordID{kind, key})
	return nil
}

// ListRecords implements Store.
func (m *Memory) ListRecords(ctx context.Context, kind, prefix string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	var keys []string
	for id := range m.records {
		if id.kind == kind && strings.HasPrefix(id.key, prefix) {
			keys = append(keys, id.key)
		}
	}
	slices.Sort(keys)
	return keys, nil
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
	return n, nil
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
	return nil
}
