package store

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkFdatasync is the floor of a durable write on the disk of the
// benchmark's temporary folder: 4 KiB written, then flushed with the call
// the WAL's flush makes (syncData). "append" grows the file each time;
// "overwrite" rewrites the first 1 MiB of it in turn, as a WAL does once it
// restarted after a checkpoint. Against BenchmarkAppendSQLite of the same
// run, what a durable append costs beyond the disk:
//
//	go test ./store -run XXX -bench 'Fdatasync|AppendSQLite$' -benchtime 500x -count 3
func BenchmarkFdatasync(b *testing.B) {
	for _, mode := range []string{"append", "overwrite"} {
		b.Run(mode, func(b *testing.B) {
			f, err := os.OpenFile(filepath.Join(b.TempDir(), "f"), os.O_RDWR|os.O_CREATE, 0o600)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			page := make([]byte, 4<<10)
			if mode == "overwrite" {
				for range 256 {
					f.Write(page)
				}
				if err := syncData(f); err != nil {
					b.Fatal(err)
				}
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for k := range b.N {
				t0 := time.Now()
				if mode == "append" {
					_, err = f.Write(page)
				} else {
					_, err = f.WriteAt(page, int64(k%256)*int64(len(page)))
				}
				if err == nil {
					err = syncData(f)
				}
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
		})
	}
}
