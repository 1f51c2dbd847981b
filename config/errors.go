package config

import (
	"errors"
	"sort"
	"strings"

	"github.com/attune-dev/attune/internal/tomlx"
)

// Error is one problem in a configuration: where it is and what is wrong.
// It prints as "FILE:LINE: PATH: MSG" (attune.toml:12: bots.main.ceilng:
// unknown key; did you mean "ceiling"?). Parts that are unknown are left
// out: Line is 0 when the position is not known, Col is set only for TOML
// syntax errors and the source checks, Path is empty when the problem is not
// about one key. An Error is not changed after it is returned and is safe for
// concurrent reads.
type Error struct {
	File string // the file the configuration came from; "" when none
	Line int    // 1-based; 0 when unknown
	Col  int    // 1-based byte column; 0 when unknown
	Path string // the key path, e.g. bots.main.behaviors[1]
	Msg  string

	err error // the cause, for errors.Is and errors.As
}

func (e *Error) Error() string {
	return tomlx.Located(e.File, e.Line, e.Col, e.Path, e.Msg)
}

// Unwrap returns the underlying cause (an os error for a file that cannot
// be read, the toml.ParseError of a syntax error), or nil.
func (e *Error) Unwrap() error { return e.err }

// List is several configuration problems, in the order of the file (those
// whose line is unknown last). Its Error prints one problem per line. Like
// Error, it is safe for concurrent reads.
type List struct {
	Errors []*Error
}

func (l *List) Error() string {
	lines := make([]string, len(l.Errors))
	for i, e := range l.Errors {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems, so that errors.As finds an *Error in a List.
func (l *List) Unwrap() []error {
	errs := make([]error, len(l.Errors))
	for i, e := range l.Errors {
		errs[i] = e
	}
	return errs
}

// Errors returns the problems an error of this package holds: the Errors of
// a *List, or the *Error itself. It returns nil for nil and for errors that
// are neither.
func Errors(err error) []*Error {
	var l *List
	if errors.As(err, &l) {
		return l.Errors
	}
	var e *Error
	if errors.As(err, &e) {
		return []*Error{e}
	}
	return nil
}

// join turns collected problems into the error to return: nil, the one
// *Error, or a *List ordered by position (problems whose line is unknown
// last, in the order they were found).
func join(errs []*Error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i], errs[j]
		if (a.Line == 0) != (b.Line == 0) {
			return b.Line == 0
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return &List{Errors: errs}
}
