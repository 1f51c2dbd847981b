package config

import (
	"strconv"
	"strings"
	"time"

	"github.com/attune-dev/attune/internal/tomlx"
)

// Bounds of the numeric keys: a value past them is a config error, never
// a silently huge loop or allocation.
const (
	// MaxCallbackBudget bounds engine.callback_budget.
	MaxCallbackBudget = 10 * time.Minute
	// MaxHostTimeout bounds [engine] host_timeout.
	MaxHostTimeout = 24 * time.Hour
	// MaxRetryBudget bounds a bot's retry_budget.
	MaxRetryBudget = 100
	// MinMemoryLimit and MaxMemoryLimit bound engine.memory_limit (0 turns
	// it off).
	MinMemoryLimit = 64 << 20
	MaxMemoryLimit = 1 << 40
	// MaxNoteSize bounds engine.max_note_bytes and max_boundary_note_bytes:
	// the data limit of any text leaving a behavior.
	MaxNoteSize = 16 << 20
)

var memoryUnits = []struct {
	suffix string
	scale  int64
}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}

// memoryLimit reads engine.memory_limit: a size like "512MiB" or "2GiB",
// a number of bytes, or 0 / "off".
func (d *decoder) memoryLimit(p path, v any) (int64, bool) {
	const want = `want a size like "512MiB" or "2GiB" (or 0 to turn the limit off)`
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case string:
		s := strings.TrimSpace(x)
		if s == "off" || s == "0" {
			return 0, true
		}
		scale := int64(0)
		for _, u := range memoryUnits {
			if strings.HasSuffix(s, u.suffix) {
				s, scale = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.scale
				break
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if scale == 0 || err != nil || f < 0 || f*float64(scale) > MaxMemoryLimit {
			if err == nil && scale != 0 && f*float64(scale) > MaxMemoryLimit {
				d.errorf(p, "want at most 1TiB, got %s", quote(x))
				return 0, false
			}
			d.errorf(p, "%s, got %s", want, quote(x))
			return 0, false
		}
		n = int64(f * float64(scale))
	default:
		d.errorf(p, "%s, got %s", want, tomlx.Describe(v))
		return 0, false
	}
	switch {
	case n == 0:
		return 0, true
	case n < MinMemoryLimit:
		d.errorf(p, "want at least 64MiB (or 0 to turn the limit off), got %d bytes", n)
		return 0, false
	case n > MaxMemoryLimit:
		d.errorf(p, "want at most 1TiB, got %d bytes", n)
		return 0, false
	}
	return n, true
}

// size reads a size like "64KiB" or a number of bytes of at most max; a
// value it cannot read is reported at p with want.
func (d *decoder) size(p path, v any, want string, max int64) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case string:
		s := strings.TrimSpace(x)
		scale := int64(0)
		for _, u := range memoryUnits {
			if strings.HasSuffix(s, u.suffix) {
				s, scale = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.scale
				break
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if scale == 0 || err != nil || f < 0 || f*float64(scale) > float64(max) {
			d.errorf(p, "%s, got %s", want, quote(x))
			return 0, false
		}
		return int64(f * float64(scale)), true
	default:
		d.errorf(p, "%s, got %s", want, tomlx.Describe(v))
		return 0, false
	}
}

// noteSize reads engine.max_note_bytes or max_boundary_note_bytes: a number
// of bytes or a size like "64KiB", from 1 byte to 16MiB.
func (d *decoder) noteSize(p path, v any) (int64, bool) {
	const want = `want a size like "64KiB" or a number of bytes, from 1 to 16MiB`
	n, ok := d.size(p, v, want, MaxNoteSize)
	if !ok {
		return 0, false
	}
	if n < 1 || n > MaxNoteSize {
		d.errorf(p, "%s, got %d bytes", want, n)
		return 0, false
	}
	return n, true
}

// programCache reads engine.program_cache: true (the default place),
// false (off) or a folder.
func (d *decoder) programCache(cfg *Config, p path, v any) {
	switch x := v.(type) {
	case bool:
		cfg.Engine.ProgramCache = ""
		if !x {
			cfg.Engine.ProgramCache = "off"
		}
	case string:
		if strings.TrimSpace(x) == "" {
			d.errorf(p, "want true, false or a folder for the compiled programs, got an empty string")
			return
		}
		abs, err := absPath(x, cfg.Dir)
		if err != nil {
			d.errorf(p, "%v", err)
			return
		}
		cfg.Engine.ProgramCache = abs
	default:
		d.errorf(p, "want true, false or a folder for the compiled programs, got %s", tomlx.Describe(v))
	}
}

// MaxProgramCacheSize bounds engine.program_cache_size.
const MaxProgramCacheSize = 16 << 30

// programCacheSize reads engine.program_cache_size: a size like "64MiB"
// or a number of bytes, from 1MiB to 16GiB.
func (d *decoder) programCacheSize(p path, v any) (int64, bool) {
	const want = `want a size like "64MiB" or a number of bytes, from 1MiB to 16GiB`
	n, ok := d.size(p, v, want, MaxProgramCacheSize)
	if !ok {
		return 0, false
	}
	if n < 1<<20 || n > MaxProgramCacheSize {
		d.errorf(p, "%s, got %d bytes", want, n)
		return 0, false
	}
	return n, true
}
