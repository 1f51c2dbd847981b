package store

import (
	"context"
	"reflect"
	"testing"
)

// Scratch never writes to the store it reads.
func TestScratchLeavesBase(t *testing.T) {
	ctx := context.Background()
	base := NewMemory()
	base.PutRecord(ctx, "k", "a", []byte("1"))
	base.Append(ctx, "log", 0, [][]byte{[]byte(`1`)}, nil)
	s := Scratch(base)
	s.PutRecord(ctx, "k", "b", []byte("2"))
	s.DeleteRecord(ctx, "k", "a")
	if n, err := s.Append(ctx, "log", 1, [][]byte{[]byte(`2`)}, nil); err != nil || n != 2 {
		t.Fatal(n, err)
	}
	if keys, _ := s.ListRecords(ctx, "k", ""); !reflect.DeepEqual(keys, []string{"b"}) {
		t.Fatalf("scratch keys %v", keys)
	}
	if keys, _ := base.ListRecords(ctx, "k", ""); !reflect.DeepEqual(keys, []string{"a"}) {
		t.Fatalf("base keys %v", keys)
	}
	if n, _ := base.Length(ctx, "log"); n != 1 {
		t.Fatalf("base log %d", n)
	}
}
