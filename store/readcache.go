package store

import (
	"encoding/binary"
	"sync"
)

// A read cache, served from memory. A SQLite store keeps the last entries
// of the logs it appended to or read to the end (their tails), and the
// records and blobs it wrote or read, and answers Read, Length, GetRecord
// and GetBlob from them while it is sure no commit happened since: from
// any connection, of this process or another.
//
// It knows that from the WAL-index header, the first 48 bytes of the
// file's -shm companion, which every commit in WAL mode rewrites (its
// iChange counter goes up by one, its frame count and checksums change;
// the format is SQLite's documented WAL-index format). Reading it is one
// pread of the shared memory file, no SQL. The tails are consistent with
// one header value; a read whose header differs goes to SQLite.
//
// The cache moves forward with the store's own writes: inside the write
// transaction (the write lock held, so no other commit can happen) the
// header is read before the commit, and again after it; when exactly one
// commit happened between the two (iChange went up by one) it was this
// one, and the cache takes what it wrote. Any other difference (another
// writer) drops everything. A read of SQLite that finds the same header
// before and after learns what it read. So nothing is ever served at a
// header value other than the one it was known to be current at.

const (
	walIndexHeader = 48       // bytes of one copy of the WAL-index header
	walIChange     = 8        // offset of iChange (u32, native byte order)
	walIsInit      = 12       // offset of isInit (u8)
	maxTail        = 256      // entries kept per log
	maxTailLogs    = 1 << 12  // logs with a tail
	maxTailBytes   = 64 << 10 // bytes of one entry worth keeping
	maxCacheBytes  = 16 << 20 // bytes of records and blobs kept
	walVersion     = 3007000  // iVersion of the WAL-index header this reads
)

type walHeader [walIndexHeader]byte

// tail is the end of one log: its length n and the entries after from.
type tail struct {
	from, n int64
	data    [][]byte // entries from+1 .. n
}

// cached is a record or a blob, or the knowledge that there is none.
type cached struct {
	data    []byte
	missing bool
}

type readCache struct {
	mu      sync.Mutex
	hdr     walHeader
	valid   bool // everything kept is current at hdr
	logs    map[string]*tail
	records map[[2]string]cached
	blobs   map[string]cached
	bytes   int // of records and blobs
}

// resetLocked drops everything and makes the cache current at h.
func (t *readCache) resetLocked(h walHeader, ok bool) {
	if t.logs == nil {
		t.logs, t.records, t.blobs = map[string]*tail{}, map[[2]string]cached{}, map[string]cached{}
	}
	clear(t.logs)
	clear(t.records)
	clear(t.blobs)
	t.bytes = 0
	t.hdr, t.valid = h, ok
}

// invalidate forgets everything (after a commit whose outcome is unknown).
func (t *readCache) invalidate() {
	t.mu.Lock()
	t.resetLocked(walHeader{}, false)
	t.mu.Unlock()
}

// current reports, with t.mu held, whether the cache is current at h.
func (t *readCache) current(h walHeader) bool { return t.valid && t.hdr == h }

// getRecord answers GetRecord.
func (t *readCache) getRecord(h walHeader, kind, key string) (cached, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.current(h) {
		return cached{}, false
	}
	c, ok := t.records[[2]string{kind, key}]
	if ok && !c.missing {
		c.data = clone(c.data)
	}
	return c, ok
}

// getBlob answers GetBlob.
func (t *readCache) getBlob(h walHeader, sha string) (cached, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.current(h) {
		return cached{}, false
	}
	c, ok := t.blobs[sha]
	if ok && !c.missing {
		c.data = clone(c.data)
	}
	return c, ok
}

// learnRecord keeps what a read found at header h (read before and after it).
func (t *readCache) learnRecord(h walHeader, kind, key string, c cached) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.current(h) {
		t.resetLocked(h, true)
	}
	t.setRecordLocked(kind, key, c)
}

func (t *readCache) learnBlob(h walHeader, sha string, c cached) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.current(h) {
		t.resetLocked(h, true)
	}
	t.setBlobLocked(sha, c)
}

// setRecordLocked keeps a record (a copy), or that there is none.
func (t *readCache) setRecordLocked(kind, key string, c cached) {
	keepLocked(t, t.records, [2]string{kind, key}, c)
}

// setBlobLocked keeps a blob (a copy), or that there is none.
func (t *readCache) setBlobLocked(sha string, c cached) { keepLocked(t, t.blobs, sha, c) }

// keepLocked keeps c (a copy of its data) under k in m, counting its bytes
// against the cache's room; when there is no room, k is forgotten.
func keepLocked[K comparable](t *readCache, m map[K]cached, k K, c cached) {
	t.bytes -= len(m[k].data)
	if !c.missing {
		c.data = clone(c.data)
	}
	if !t.room(len(c.data)) {
		delete(m, k)
		return
	}
	m[k] = c
	t.bytes += len(c.data)
}

// room makes room for n more bytes of records and blobs, dropping them
// all when full; false when n alone is too many.
func (t *readCache) room(n int) bool {
	if n > maxCacheBytes/16 {
		return false
	}
	if t.bytes+n > maxCacheBytes || len(t.records)+len(t.blobs) >= maxTailLogs {
		clear(t.records)
		clear(t.blobs)
		t.bytes = 0
	}
	return true
}

// read answers Read from a tail; hit is false when it cannot.
func (t *readCache) read(h walHeader, log string, after int64, limit int) (out []Entry, hit bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.current(h) {
		return nil, false
	}
	tl := t.logs[log]
	if tl == nil || after < tl.from {
		return nil, false
	}
	if after >= tl.n {
		return []Entry{}, true
	}
	k := int(after - tl.from)
	end := len(tl.data)
	if limit > 0 {
		end = min(end, k+limit)
	}
	out = make([]Entry, 0, end-k)
	for j := k; j < end; j++ {
		out = append(out, Entry{Seq: tl.from + int64(j) + 1, Data: clone(tl.data[j])})
	}
	return out, true
}

// length answers Length from a tail.
func (t *readCache) length(h walHeader, log string) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.current(h) {
		return 0, false
	}
	if tl := t.logs[log]; tl != nil {
		return tl.n, true
	}
	return 0, false
}

// learnTail keeps what a read of SQLite found at header h (read before
// and after it): the log's entries after `after`, up to its end, which is n.
func (t *readCache) learnTail(h walHeader, log string, after, n int64, es []Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.current(h) {
		t.resetLocked(h, true)
	}
	if old := t.logs[log]; old != nil && old.n == n && old.from <= after {
		return // already known, and further back
	}
	if len(es) > maxTail {
		es = es[len(es)-maxTail:]
		after = es[0].Seq - 1
	}
	tl := &tail{from: after, n: after}
	for _, e := range es {
		tl.push(e.Data)
	}
	if tl.n != n {
		return
	}
	t.put(log, tl)
}

func (t *readCache) put(log string, tl *tail) {
	if _, ok := t.logs[log]; !ok && len(t.logs) >= maxTailLogs {
		for k := range t.logs { // drop any one
			delete(t.logs, k)
			break
		}
	}
	t.logs[log] = tl
}

// push appends one entry (a copy) to the tail, dropping the oldest past
// maxTail; an entry too large to keep is not kept, nor anything before it.
func (tl *tail) push(data []byte) {
	tl.n++
	if len(data) > maxTailBytes {
		tl.from, tl.data = tl.n, nil
		return
	}
	if len(tl.data) == maxTail { // drop the older half
		tl.data = append(tl.data[:0], tl.data[maxTail/2:]...)
		tl.from += maxTail / 2
	}
	tl.data = append(tl.data, clone(data))
}

// committed moves the cache over one write transaction of this store: h0
// read inside it before the commit, h1 after; wrote says whether it
// changed anything; apply (t.mu held) adds what it wrote.
func (t *readCache) committed(h0 walHeader, ok0 bool, h1 walHeader, ok1 bool, wrote bool, apply func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !ok0 || !ok1 {
		t.resetLocked(h1, false)
		return
	}
	if !t.valid || t.hdr != h0 {
		t.resetLocked(h0, true) // others committed before: start afresh at h0
	}
	switch {
	case !wrote && h1 == h0:
	case wrote && change(h1) == change(h0)+1:
		if apply != nil {
			apply()
		}
		t.hdr = h1
	default:
		t.resetLocked(h1, false)
	}
}

// appendedLocked records, inside committed's apply, that log grew from
// prior to n with entries (none for a call record alone).
func (t *readCache) appendedLocked(log string, prior, n int64, entries [][]byte) {
	tl := t.logs[log]
	if tl == nil || tl.n != prior {
		tl = &tail{from: prior, n: prior}
	}
	for _, e := range entries {
		tl.push(e)
	}
	if tl.n != n {
		delete(t.logs, log)
		return
	}
	t.put(log, tl)
}

// droppedLocked forgets a log's tail (it was truncated or deleted).
func (t *readCache) droppedLocked(log string) { delete(t.logs, log) }

func change(h walHeader) uint32 {
	return binary.NativeEndian.Uint32(h[walIChange:])
}
