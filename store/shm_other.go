//go:build !unix

package store

import (
	"errors"
	"os"
)

// mapShm is not available here: the header is read with pread.
func mapShm(*os.File, int) ([]byte, func() error, error) {
	return nil, nil, errors.New("no shared mapping")
}
