package store

import (
	"context"
	"errors"
	"sort"
	"sync"
)

// Scratch returns a store that reads base and writes only to memory: what
// `attune explain` runs an event against, so that the real store is never
// changed. A log is copied into memory the first time it is written (its
// entries, not its call records: a call record of base is still found
// there); records and blobs are read from memory first, then from base.
// Closing it closes neither base nor anything base holds.
func Scratch(base Store) Store {
	return &scratch{base: base, mem: NewMemory(), logs: map[string]bool{}, recs: map[string]bool{}, gone: map[string]bool{}}
}

type scratch struct {
	base Store
	mem  Store

	mu   sync.Mutex
	logs map[string]bool // logs copied into mem
	recs map[string]bool // records written in mem (kind\x00key)
	gone map[string]bool // records deleted here
}

func rk(kind, key string) string { return kind + "\x00" + key }

func (s *scratch) PutBlob(ctx context.Context, data []byte) (string, error) {
	return s.mem.PutBlob(ctx, data)
}

func (s *scratch) GetBlob(ctx context.Context, sha string) ([]byte, error) {
	if b, err := s.mem.GetBlob(ctx, sha); err == nil {
		return b, nil
	}
	return s.base.GetBlob(ctx, sha)
}

func (s *scratch) DeleteBlob(ctx context.Context, sha string) error {
	return s.mem.DeleteBlob(ctx, sha)
}

func (s *scratch) GetRecord(ctx context.Context, kind, key string) ([]byte, error) {
	s.mu.Lock()
	mine, gone := s.recs[rk(kind, key)], s.gone[rk(kind, key)]
	s.mu.Unlock()
	if gone {
		return nil, ErrNotFound
	}
	if mine {
		return s.mem.GetRecord(ctx, kind, key)
	}
	return s.base.GetRecord(ctx, kind, key)
}

// own copies a record of base into memory before it is changed here.
func (s *scratch) own(ctx context.Context, kind, key string) error {
	s.mu.Lock()
	done := s.recs[rk(kind, key)] || s.gone[rk(kind, key)]
	s.mu.Unlock()
	if done {
		return nil
	}
	v, err := s.base.GetRecord(ctx, kind, key)
	if err == nil {
		err = s.mem.PutRecord(ctx, kind, key, v)
	} else if errors.Is(err, ErrNotFound) {
		err = nil
	}
	if err == nil {
		s.mu.Lock()
		s.recs[rk(kind, key)] = true
		s.mu.Unlock()
	}
	return err
}

func (s *scratch) PutRecord(ctx context.Context, kind, key string, value []byte) error {
	if err := s.mem.PutRecord(ctx, kind, key, value); err != nil {
		return err
	}
	s.mu.Lock()
	s.recs[rk(kind, key)] = true
	delete(s.gone, rk(kind, key))
	s.mu.Unlock()
	return nil
}

func (s *scratch) PutRecordIfAbsent(ctx context.Context, kind, key string, value []byte) ([]byte, bool, error) {
	if err := s.own(ctx, kind, key); err != nil {
		return nil, false, err
	}
	s.mu.Lock()
	delete(s.gone, rk(kind, key))
	s.recs[rk(kind, key)] = true
	s.mu.Unlock()
	return s.mem.PutRecordIfAbsent(ctx, kind, key, value)
}

func (s *scratch) DeleteRecord(ctx context.Context, kind, key string) error {
	if err := s.mem.DeleteRecord(ctx, kind, key); err != nil {
		return err
	}
	s.mu.Lock()
	s.gone[rk(kind, key)] = true
	delete(s.recs, rk(kind, key))
	s.mu.Unlock()
	return nil
}

func (s *scratch) ListRecords(ctx context.Context, kind, prefix string) ([]string, error) {
	a, err := s.base.ListRecords(ctx, kind, prefix)
	if err != nil {
		return nil, err
	}
	b, err := s.mem.ListRecords(ctx, kind, prefix)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	s.mu.Lock()
	for _, k := range append(a, b...) {
		if !seen[k] && !s.gone[rk(kind, k)] {
			seen[k] = true
			out = append(out, k)
		}
	}
	s.mu.Unlock()
	sort.Strings(out)
	return out, nil
}

// ownLog copies a log of base into memory before it is changed here.
func (s *scratch) ownLog(ctx context.Context, log string) error {
	s.mu.Lock()
	done := s.logs[log]
	s.mu.Unlock()
	if done {
		return nil
	}
	es, err := s.base.Read(ctx, log, 0, 0)
	if err != nil {
		return err
	}
	if len(es) > 0 {
		data := make([][]byte, len(es))
		for k, e := range es {
			data[k] = e.Data
		}
		if _, err := s.mem.Append(ctx, log, 0, data, nil); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.logs[log] = true
	s.mu.Unlock()
	return nil
}

func (s *scratch) copied(log string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs[log]
}

func (s *scratch) Append(ctx context.Context, log string, expected int64, entries [][]byte, call *CallRecord) (int64, error) {
	if err := s.ownLog(ctx, log); err != nil {
		return 0, err
	}
	if call != nil {
		if rec, err := s.base.GetCall(ctx, log, call.ID); err == nil {
			if string(rec.Input) == string(call.Input) {
				return 0, &CallExistsError{Record: rec}
			}
			return 0, ErrCallConflict
		}
	}
	return s.mem.Append(ctx, log, expected, entries, call)
}

func (s *scratch) Read(ctx context.Context, log string, after int64, limit int) ([]Entry, error) {
	if s.copied(log) {
		return s.mem.Read(ctx, log, after, limit)
	}
	return s.base.Read(ctx, log, after, limit)
}

func (s *scratch) Length(ctx context.Context, log string) (int64, error) {
	if s.copied(log) {
		return s.mem.Length(ctx, log)
	}
	return s.base.Length(ctx, log)
}

func (s *scratch) Truncate(ctx context.Context, log string, n int64) error {
	if err := s.ownLog(ctx, log); err != nil {
		return err
	}
	return s.mem.Truncate(ctx, log, n)
}

func (s *scratch) DeleteLog(ctx context.Context, log string) error {
	if err := s.ownLog(ctx, log); err != nil {
		return err
	}
	return s.mem.DeleteLog(ctx, log)
}

func (s *scratch) GetCall(ctx context.Context, log, id string) (CallRecord, error) {
	if rec, err := s.mem.GetCall(ctx, log, id); err == nil {
		return rec, nil
	}
	return s.base.GetCall(ctx, log, id)
}

func (s *scratch) Close() error { return s.mem.Close() }
