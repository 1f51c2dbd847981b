package store_test

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/attune-dev/attune/store"
)

// An action as an owner log holds one: a small JSON object.
var benchEntry = []byte(`{"type":"create","id":"t-0042","title":"write the store benchmarks","revision":1,"by":"instance-7"}`)

func benchAppend(b *testing.B, s store.Store) {
	ctx := context.Background()
	entries := [][]byte{benchEntry}
	b.SetBytes(int64(len(benchEntry)))
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Append(ctx, "owner/project/default/tasks", int64(i), entries, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendSQLite is the cost of one durable append: a commit and
// one fdatasync of the WAL (wal.go). With one appender it is the disk's
// flush latency, the floor of every durable write.
func BenchmarkAppendSQLite(b *testing.B) {
	s := openSQLite(b, sqlitePath(b))
	defer s.Close()
	benchAppend(b, s)
}

func BenchmarkAppendMemory(b *testing.B) {
	benchAppend(b, store.NewMemory())
}

// BenchmarkReadSQLite reads 100 entries from the middle of a log of 10000:
// what folding a slice of an owner log costs.
func BenchmarkReadSQLite(b *testing.B) {
	ctx := context.Background()
	s := openSQLite(b, sqlitePath(b))
	defer s.Close()
	batch := make([][]byte, 1000)
	for i := range batch {
		batch[i] = benchEntry
	}
	for i := range 10 {
		if _, err := s.Append(ctx, "l", int64(i*1000), batch, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(100 * int64(len(benchEntry)))
	b.ResetTimer()
	for i := range b.N {
		es, err := s.Read(ctx, "l", int64(i%9900), 100)
		if err != nil {
			b.Fatal(err)
		}
		if len(es) != 100 || !bytes.Equal(es[99].Data, benchEntry) {
			b.Fatalf("Read gave %d entries", len(es))
		}
	}
}

// BenchmarkAppendSQLiteWriters: 8 goroutines appending one entry each to
// a log of their own, as 8 instances journaling at once do; with group
// commit they share transactions and fsyncs.
func BenchmarkAppendSQLiteWriters(b *testing.B) {
	s := openSQLite(b, sqlitePath(b))
	defer s.Close()
	ctx := context.Background()
	var next atomic.Int64
	entries := [][]byte{benchEntry}
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		log := "journal/w" + strconv.FormatInt(next.Add(1), 10)
		for pb.Next() {
			if _, err := s.Append(ctx, log, store.Any, entries, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAppendSQLiteCommands: 8 goroutines appending as commands do,
// each to an owner log of its own: one action at the length it observed,
// with the call record of a fresh call id.
func BenchmarkAppendSQLiteCommands(b *testing.B) {
	s := openSQLite(b, sqlitePath(b))
	defer s.Close()
	ctx := context.Background()
	var next atomic.Int64
	entries := [][]byte{benchEntry}
	input := []byte(`{"input":{"by":1},"method":"add"}`)
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := strconv.FormatInt(next.Add(1), 10)
		log := "owner/session/w" + w + "/counter"
		var n int64
		for pb.Next() {
			call := &store.CallRecord{ID: "c" + w + "-" + strconv.FormatInt(n, 10), Input: input, Result: []byte("1")}
			got, err := s.Append(ctx, log, n, entries, call)
			if err != nil {
				b.Error(err)
				return
			}
			n = got
		}
	})
}

// BenchmarkOpenSQLite opens an existing store, appends one entry durably
// and closes it: what a hook process pays the store for one event, the
// process itself aside. Open and close make nothing durable (no checkpoint,
// no new -wal or -shm file); the append is one fdatasync.
func BenchmarkOpenSQLite(b *testing.B) {
	ctx := context.Background()
	path := sqlitePath(b)
	s := openSQLite(b, path)
	s.Close()
	b.ResetTimer()
	for i := range b.N {
		s, err := store.OpenSQLite(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Append(ctx, "session/bench", int64(i), [][]byte{benchEntry}, nil); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// A journal entry of one tool call, about the size the engine writes.
var benchCall = []byte(`{"kind":"call","turn":1,"round":42,"id":"call-000042","path":"fs/read","args":{"path":"f42"},"status":"ok","result":"text","effects":["read"]}`)

// BenchmarkReadSQLiteJournal100k reads a journal of 100000 entries from
// its start to its end in chunks of 8192, as attune inspect reads a
// session of 100k tool calls: SQLite's part of opening it. cpu-ns/op is
// the CPU time the process spent on one read.
func BenchmarkReadSQLiteJournal100k(b *testing.B) {
	const entries, chunk = 100_000, 8192
	ctx := context.Background()
	path := sqlitePath(b)
	s := openSQLite(b, path)
	batch := make([][]byte, 1000)
	for i := range batch {
		batch[i] = benchCall
	}
	for i := range entries / len(batch) {
		if _, err := s.Append(ctx, "session/big/journal", int64(i*len(batch)), batch, nil); err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	s = openSQLite(b, path) // nothing of the log in the read cache
	defer s.Close()
	b.SetBytes(entries * int64(len(benchCall)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, cpuOK := cpuTime()
	for range b.N {
		n := 0
		for after := int64(0); ; {
			es, err := s.Read(ctx, "session/big/journal", after, chunk)
			if err != nil {
				b.Fatal(err)
			}
			if len(es) == 0 {
				break
			}
			if !bytes.Equal(es[len(es)-1].Data, benchCall) {
				b.Fatalf("entry %d: %q", es[len(es)-1].Seq, es[len(es)-1].Data)
			}
			n += len(es)
			after = es[len(es)-1].Seq
		}
		if n != entries {
			b.Fatalf("read %d entries", n)
		}
	}
	// The process's CPU time (the garbage collector's included) for one
	// read: on a busy machine a steadier measure than the wall clock.
	if cpu1, ok := cpuTime(); ok && cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkOpenSQLiteRead opens an existing store whose WAL holds what
// ~50 hook events left there (about 150 pages), reads one record and
// closes it: the read side of a hook process's store, what an event pays
// before it writes. cpu-ns/op is the process's CPU time per open.
func BenchmarkOpenSQLiteRead(b *testing.B) {
	ctx := context.Background()
	path := sqlitePath(b)
	s := openSQLite(b, path)
	for i := range 150 {
		if _, err := s.Append(ctx, "session/bench", int64(2*i), [][]byte{benchEntry, benchCall}, nil); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.PutRecord(ctx, "instance", "a", []byte(`{"v":1}`)); err != nil {
		b.Fatal(err)
	}
	s.Close()
	cpu0, cpuOK := cpuTime()
	b.ResetTimer()
	for range b.N {
		s, err := store.OpenSQLite(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.GetRecord(ctx, "instance", "a"); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	if cpu1, ok := cpuTime(); ok && cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}
