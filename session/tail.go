package session

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"

	"github.com/attune-dev/attune/store"
)

// ReadFrom flushes, then returns the entries after seq after (the first
// has seq after+1), decoded, with the stored entries they were decoded
// from (their seqs and bytes). The journal's head becomes the last seq
// read, or after when none is.
func (j *Journal) ReadFrom(ctx context.Context, after int64) ([]Entry, []store.Entry, error) {
	if err := j.Flush(ctx); err != nil {
		return nil, nil, err
	}
	j.wmu.Lock()
	defer j.wmu.Unlock()
	raw, err := j.st.Read(ctx, j.log, after, 0)
	if err != nil {
		return nil, nil, err
	}
	out := make([]Entry, len(raw))
	if err := decodeEntries(j.log, raw, out); err != nil {
		return nil, nil, err
	}
	head := after
	if len(raw) > 0 {
		head = raw[len(raw)-1].Seq
	}
	j.mu.Lock()
	j.head = head
	j.mu.Unlock()
	return out, raw, nil
}

// Head is the length of the journal as this Journal knows it: the last
// seq it read (ReadFrom) or wrote. Entries another process appended since
// are not counted (Moved).
func (j *Journal) Head() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.head
}

// Moved flushes, then reports whether the stored journal's length differs
// from Head: another process appended to it (or truncated it) since this
// Journal last read or wrote it.
func (j *Journal) Moved(ctx context.Context) (bool, error) {
	if err := j.Flush(ctx); err != nil {
		return false, err
	}
	j.wmu.Lock()
	defer j.wmu.Unlock()
	n, err := j.st.Length(ctx, j.log)
	if err != nil {
		return false, err
	}
	return n != j.Head(), nil
}

// BookState is the whole of a notebook: the count of ids given, which
// sealed notes existed and were placed (two bits a note), and the notes
// not sealed yet (those of the open turn), each placed or not.
type BookState struct {
	Seq     int      `json:"seq"`
	Existed []uint64 `json:"existed,omitempty"`
	Placed  []uint64 `json:"placed,omitempty"`
	Live    []Note   `json:"live,omitempty"`
}

// State returns the notebook's state.
func (b *Book) State() BookState {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := BookState{Seq: b.seq, Existed: append([]uint64(nil), b.existed...), Placed: append([]uint64(nil), b.placed...)}
	if len(b.live) > 0 {
		st.Live = make([]Note, len(b.live))
		for k, n := range b.live {
			st.Live[k] = *n
		}
	}
	return st
}

// Restore makes an empty notebook the notebook st describes: the live
// notes not placed (nor expired) wait to be placed, in their order.
func (b *Book) Restore(st BookState) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq = st.Seq
	b.existed = append(bitset(nil), st.Existed...)
	b.placed = append(bitset(nil), st.Placed...)
	for _, n := range st.Live {
		b.add(n)
	}
}

// parallelDecode is the journal length from which entries are decoded on
// several goroutines (a long session read back: inspect, record, replay).
const parallelDecode = 8192

// decodeEntries decodes raw into out (as long), on up to GOMAXPROCS
// goroutines for a long journal; the error is the first entry's that fails.
func decodeEntries(log string, raw []store.Entry, out []Entry) error {
	one := func(from, to int) error {
		for k := from; k < to; k++ {
			if err := json.Unmarshal(raw[k].Data, &out[k]); err != nil {
				return fmt.Errorf("journal %s entry %d: %w", log, raw[k].Seq, err)
			}
		}
		return nil
	}
	return inParts(len(raw), one)
}

// inParts runs one over [0, n) in parts, on up to GOMAXPROCS goroutines
// when n is at least parallelDecode, and returns the first part's error.
func inParts(n int, one func(from, to int) error) error {
	procs := runtime.GOMAXPROCS(0)
	if n < parallelDecode || procs < 2 {
		return one(0, n)
	}
	errs := make([]error, procs)
	var wg sync.WaitGroup
	step := (n + procs - 1) / procs
	for w := 0; w < procs; w++ {
		from, to := w*step, min((w+1)*step, n)
		if from >= to {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = one(from, to)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
