package store

import "sort"

// memEntries is the entries of one Memory log, copied into chunks of
// bytes: entry k of a chunk is data[ends[k-1]:ends[k]]. An append copies
// its bytes into the last chunk instead of allocating a slice per entry,
// and a long log is a list of chunks that are never moved again, not one
// slice that grows by copying itself; the chunks hold no pointers, so the
// collector does not scan them.
type memEntries struct {
	chunks []*memChunk
	n      int64
}

type memChunk struct {
	first int64 // the index (seq-1) of its first entry
	data  []byte
	ends  []uint32
}

// A log's first chunk is small (most logs are short); each next one is
// twice the size of the one before, up to memChunkEntries entries in
// memChunkBytes bytes. An entry larger than a chunk gets a chunk of its
// own.
const (
	memChunkBytes   = 64 << 10
	memChunkEntries = 1024
)

func (m *memEntries) len() int64 { return m.n }

// add appends a copy of e.
func (m *memEntries) add(e []byte) {
	var c *memChunk
	if k := len(m.chunks); k > 0 {
		c = m.chunks[k-1]
	}
	if c == nil || len(c.ends) == cap(c.ends) || len(e) > cap(c.data)-len(c.data) {
		bytes, entries := 512, 8
		if c != nil {
			bytes, entries = min(2*cap(c.data), memChunkBytes), min(2*cap(c.ends), memChunkEntries)
		}
		c = &memChunk{first: m.n, data: make([]byte, 0, max(bytes, len(e))), ends: make([]uint32, 0, entries)}
		m.chunks = append(m.chunks, c)
	}
	c.data = append(c.data, e...)
	c.ends = append(c.ends, uint32(len(c.data)))
	m.n++
}

// read returns copies of the entries with indexes [from, to), as Entries
// (seq = index+1). An empty entry comes back as an empty slice, not nil.
func (m *memEntries) read(from, to int64) []Entry {
	out := make([]Entry, 0, to-from)
	k := sort.Search(len(m.chunks), func(k int) bool { return m.chunks[k].first > from }) - 1
	for ; from < to; k++ {
		c := m.chunks[k]
		for i := from - c.first; i < int64(len(c.ends)) && from < to; i++ {
			start := uint32(0)
			if i > 0 {
				start = c.ends[i-1]
			}
			out = append(out, Entry{Seq: from + 1, Data: clone(c.data[start:c.ends[i]])})
			from++
		}
	}
	return out
}

// truncate keeps the first n entries. The bytes of the dropped ones are
// written over by later appends: nothing outside refers to them (reads
// hand out copies).
func (m *memEntries) truncate(n int64) {
	if n >= m.n {
		return
	}
	k := sort.Search(len(m.chunks), func(k int) bool { return m.chunks[k].first >= n })
	clear(m.chunks[k:]) // let the dropped chunks be collected
	m.chunks = m.chunks[:k]
	if k > 0 {
		c := m.chunks[k-1]
		c.ends = c.ends[:n-c.first]
		c.data = c.data[:0]
		if len(c.ends) > 0 {
			c.data = c.data[:c.ends[len(c.ends)-1]]
		}
	}
	m.n = n
}
