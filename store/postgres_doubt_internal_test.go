package store

import (
	"errors"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// A COMMIT batch that failed with an ERROR for a statement committed
// nothing; a lost connection or a FATAL leaves the outcome unknown.
func TestCommitInDoubt(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Severity: "ERROR", Code: "23505"}, false},
		{&pgconn.PgError{Severity: "FATAL", Code: "57P01", Message: "terminating connection due to administrator command"}, true},
		{io.ErrUnexpectedEOF, true},
		{errors.New("write: broken pipe"), true},
	} {
		if got := commitInDoubt(c.err); got != c.want {
			t.Errorf("%v: %v, want %v", c.err, got, c.want)
		}
	}
}
