package luabind

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	lua "github.com/attune-dev/attune/internal/lua"
)

// Data limits. A Lua table may be reached many times from one value
// (`for i = 1, 24 do t = {a = t, b = t} end` is 2^24 leaves in 24 tables),
// and conversion copies each time it is reached. So before a value leaves a
// state it is counted the way conversion will copy it: every value each
// time it is reached, every string's bytes. Over a limit it is a clear
// error, before anything is copied.
const (
	// MaxDataNodes is how many values (tables, strings, numbers...) one
	// converted value may hold, shared tables counted each time reached.
	MaxDataNodes = 1 << 18
	// MaxDataBytes is how many bytes of strings (keys included) it may hold.
	MaxDataBytes = 16 << 20
)

// ErrMemory is the class of every memory failure: a value over the data
// limits, a built-in whose result would be too large, a callback cancelled
// because the host's heap went over the memory limit.
var ErrMemory = errors.New("memory")

// ErrNotCanonical is the class of values that are not canonical plain data:
// strings that are not valid UTF-8, NaN and infinite numbers.
var ErrNotCanonical = errors.New("not canonical data")

// LimitError is a value over the data limits, or not canonical. Path says
// where ("value.a.b[3]").
type LimitError struct {
	Path  string
	Msg   string
	class error
}

func (e *LimitError) Error() string { return e.Path + ": " + e.Msg }
func (e *LimitError) Unwrap() error { return e.class }

// pendingError takes the error of a conversion made outside a callback that
// went over the data limits (ToLua), if any.
func (s *State) pendingError() error {
	if s.pending == nil {
		return nil
	}
	err := s.pending
	s.pending = nil
	return err
}

// CheckData counts v as conversion would copy it and checks it is canonical
// plain data: every string valid UTF-8, every number finite. root names it
// in the error ("value", "schema").
func CheckData(v lua.LValue, root string) error {
	c := dataCount{}
	if err := c.walk(v, 0); err != nil {
		err.Path = root + err.Path
		return err
	}
	return nil
}

// CheckSize counts v as a conversion would copy it (CheckData without the
// canonical checks), and refuses tables nested deeper than 64 (a cycle):
// for values handed to Go code that converts them on its own (a host
// library's arguments, converted by gopher-luar). root names it.
func CheckSize(v lua.LValue, root string) error {
	c := dataCount{sizeOnly: true}
	if err := c.walk(v, 0); err != nil {
		err.Path = root + err.Path
		return err
	}
	return nil
}

// Fits reports whether ToLua(v) converts v within the data limits: it
// counts v as ToLua copies it (every value each time it is reached, every
// string's bytes, 64 levels at most), without copying. It answers for plain
// data (nil, booleans, float64, strings, []any and map[string]any); for
// anything else, false.
func Fits(v any) bool {
	c := dataCount{}
	return c.fits(v, 0)
}

func (c *dataCount) fits(v any, depth int) bool {
	if c.nodes++; c.nodes > MaxDataNodes {
		return false
	}
	switch x := v.(type) {
	case nil, bool, float64:
		return true
	case string:
		c.bytes += len(x)
		return c.bytes <= MaxDataBytes
	case []any:
		if depth >= maxDepth {
			return false
		}
		for _, e := range x {
			if !c.fits(e, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		if depth >= maxDepth {
			return false
		}
		for k, e := range x {
			if c.bytes += len(k); c.bytes > MaxDataBytes || !c.fits(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

type dataCount struct {
	nodes, bytes int
	sizeOnly     bool // count only: no UTF-8 or finiteness checks; depth is an error
}

// size counts the bytes of s.
func (c *dataCount) size(s string) *LimitError {
	c.bytes += len(s)
	if c.bytes > MaxDataBytes {
		return &LimitError{Msg: fmt.Sprintf("memory: over the data limit of %d bytes of text (a table reached from several places counts each time)", MaxDataBytes), class: ErrMemory}
	}
	return nil
}

func overNodes() *LimitError {
	return &LimitError{Msg: fmt.Sprintf("memory: over the data limit of %d values (a table reached from several places counts each time)", MaxDataNodes), class: ErrMemory}
}

func tooDeep() *LimitError {
	return &LimitError{Msg: fmt.Sprintf("nested deeper than %d (a cycle?)", maxDepth)}
}

// str counts the bytes of s and checks it is valid UTF-8.
func (c *dataCount) str(s string) *LimitError {
	if err := c.size(s); err != nil {
		return err
	}
	if !utf8.ValidString(s) {
		return &LimitError{Msg: "a string that is not valid UTF-8; actions, state and results hold text only (encode bytes, e.g. as hex)", class: ErrNotCanonical}
	}
	return nil
}

func (c *dataCount) walk(v lua.LValue, depth int) *LimitError {
	c.nodes++
	if c.nodes > MaxDataNodes {
		return overNodes()
	}
	switch x := v.(type) {
	case lua.LString:
		if c.sizeOnly {
			return c.size(string(x))
		}
		return c.str(string(x))
	case lua.LNumber:
		if f := float64(x); !c.sizeOnly && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return &LimitError{Msg: fmt.Sprintf("the number %v is not plain data (NaN and infinities are refused)", f), class: ErrNotCanonical}
		}
	case *lua.LTable:
		if depth >= maxDepth {
			if c.sizeOnly {
				return tooDeep()
			}
			return nil // conversion reports the depth, with its path
		}
		var err *LimitError
		x.ForEach(func(k, e lua.LValue) {
			if err != nil {
				return
			}
			if ks, ok := k.(lua.LString); ok {
				if c.sizeOnly {
					err = c.size(string(ks))
				} else {
					err = c.str(string(ks))
				}
				if err != nil {
					err.Path = "." + strconv.Quote(string(ks)) + err.Path
					return
				}
			}
			if err = c.walk(e, depth+1); err != nil {
				switch kk := k.(type) {
				case lua.LString:
					err.Path = "." + string(kk) + err.Path
				case lua.LNumber:
					err.Path = "[" + kk.String() + "]" + err.Path
				}
			}
		})
		return err
	}
	return nil
}

// LimitCode is the code of a failure over the data limits: "memory" for
// ErrMemory, "" otherwise (for RaiseCoded).
func LimitCode(err error) string {
	if errors.Is(err, ErrMemory) {
		return "memory"
	}
	return ""
}
