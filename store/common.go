package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// blobHash is the name of a blob: the lower-case hex sha256 of its bytes.
// BlobHash is the hash PutBlob returns for data (hex SHA-256), computed
// without the store.
func BlobHash(data []byte) string { return blobHash(data) }

func blobHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// clone copies b into a new slice that is never nil.
func clone(b []byte) []byte {
	c := make([]byte, len(b))
	copy(c, b)
	return c
}

// nonNil returns b, or an empty slice when b is nil: the SQL drivers store
// a nil slice as NULL.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// nonNilAll applies nonNil to every entry, copying the outer slice only
// when one of them is nil.
func nonNilAll(entries [][]byte) [][]byte {
	for i, e := range entries {
		if e == nil {
			out := make([][]byte, len(entries))
			copy(out, entries[:i])
			for j := i; j < len(entries); j++ {
				out[j] = nonNil(entries[j])
			}
			return out
		}
	}
	return entries
}

func cloneCall(c CallRecord) CallRecord {
	return CallRecord{ID: c.ID, Input: clone(c.Input), Result: clone(c.Result), Revision: c.Revision}
}

// checkAppend validates the arguments of Append that no store accepts.
func checkAppend(expected int64, call *CallRecord) error {
	if expected < Any {
		return fmt.Errorf("store: expected length %d is negative", expected)
	}
	if call != nil && call.ID == "" {
		return errors.New("store: call record without an id")
	}
	return nil
}

func checkTruncate(n int64) error {
	if n < 0 {
		return fmt.Errorf("store: truncate to %d entries, a negative length", n)
	}
	return nil
}

// checkCall compares a call record already stored for (log, call.ID) with
// the call being appended (R5.6).
func checkCall(log string, stored CallRecord, call *CallRecord) error {
	if string(stored.Input) == string(call.Input) {
		return &CallExistsError{Record: stored}
	}
	return fmt.Errorf("store: log %q: call id %q: %w", log, call.ID, ErrCallConflict)
}

func staleError(log string, length, expected int64) error {
	return fmt.Errorf("store: log %q has length %d, not %d: %w", log, length, expected, ErrStale)
}

func blobNotFound(sha string) error {
	return fmt.Errorf("store: blob %s: %w", sha, ErrNotFound)
}

func recordNotFound(kind, key string) error {
	return fmt.Errorf("store: record %s %q: %w", kind, key, ErrNotFound)
}

func callNotFound(log, id string) error {
	return fmt.Errorf("store: log %q: call %q: %w", log, id, ErrNotFound)
}

// prefixEnd returns the least string greater than every string that starts
// with prefix, in byte order, and false when there is none (prefix is empty
// or all 0xff bytes).
func prefixEnd(prefix string) (string, bool) {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}
