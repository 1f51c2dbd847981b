package config

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Store kinds returned by ParseStore.
const (
	StoreMemory   = "memory"
	StoreSQLite   = "sqlite"
	StorePostgres = "postgres"
)

// ParseStore reads a store spec (engine.store) and returns its kind and
// target:
//
//	"memory:"                    memory, ""
//	"sqlite:PATH", "sqlite://PATH", or a bare PATH ending in ".db"
//	                             sqlite, the absolute file path (a relative
//	                             PATH is resolved against dir)
//	"postgres://...", "postgresql://..."
//	                             postgres, the spec unchanged (a libpq URL)
//
// Anything else is an error. ParseStore does not touch the file system.
func ParseStore(spec, dir string) (kind, target string, err error) {
	switch {
	case spec == "":
		return "", "", errors.New(`empty store; want "memory:", "sqlite:PATH", a path to a .db file, or "postgres://..."`)
	case spec == "memory:":
		return StoreMemory, "", nil
	case strings.HasPrefix(spec, "sqlite:"):
		p := strings.TrimPrefix(strings.TrimPrefix(spec, "sqlite:"), "//")
		if p == "" {
			return "", "", errors.New(`store "sqlite:" needs a file path, as in "sqlite:.attune/state.db"`)
		}
		abs, err := absPath(p, dir)
		if err != nil {
			return "", "", err
		}
		return StoreSQLite, abs, nil
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		if _, err := url.Parse(spec); err != nil {
			// The URL may hold a password: name the problem, not the spec.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return "", "", fmt.Errorf("store is not a valid postgres URL: %v", err)
		}
		return StorePostgres, spec, nil
	}
	if scheme, ok := urlScheme(spec); ok {
		msg := fmt.Sprintf(`unknown store kind %q; want "memory:", "sqlite:PATH", a path to a .db file, or "postgres://..."`, scheme+":")
		if strings.EqualFold(scheme, "memory") || strings.EqualFold(scheme, "sqlite") ||
			strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql") {
			msg = fmt.Sprintf("unknown store kind %q; store kinds are lower case", scheme+":")
		}
		return "", "", errors.New(msg)
	}
	if strings.HasSuffix(spec, ".db") {
		abs, err := absPath(spec, dir)
		if err != nil {
			return "", "", err
		}
		return StoreSQLite, abs, nil
	}
	if spec == "memory" {
		return "", "", errors.New(`unknown store "memory"; did you mean "memory:"?`)
	}
	return "", "", fmt.Errorf(`unknown store %q; want "memory:", "sqlite:PATH", a path to a .db file, or "postgres://..."`, spec)
}

// urlScheme reports the scheme of a spec that starts like a URL
// ("mysql://", "redis:"); a single letter before the colon is a Windows
// drive, not a scheme.
func urlScheme(spec string) (string, bool) {
	i := strings.IndexByte(spec, ':')
	if i < 2 {
		return "", false
	}
	for j, r := range spec[:i] {
		alpha := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !alpha && (j == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return "", false
		}
	}
	return spec[:i], true
}

// absPath resolves p against dir and makes it absolute.
func absPath(p, dir string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("cannot resolve path %q: %v", p, err)
	}
	return abs, nil
}

// PostgresTarget adds the [engine] pool_max_conns, connect_timeout and
// statement_timeout settings to a postgres:// URL, each unless the URL
// sets it already (the URL wins). Other targets are returned unchanged.
func (e *Engine) PostgresTarget(target string) string {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return target
	}
	q := u.Query()
	set := func(k, v string) {
		if !q.Has(k) {
			q.Set(k, v)
		}
	}
	if e.PoolMaxConns > 0 {
		set("pool_max_conns", strconv.Itoa(e.PoolMaxConns))
	}
	if e.ConnectTimeout > 0 {
		set("connect_timeout", strconv.Itoa(max(1, int(e.ConnectTimeout.Round(time.Second)/time.Second))))
	}
	if e.StatementTimeout > 0 {
		set("statement_timeout", strconv.FormatInt(max(1, e.StatementTimeout.Milliseconds()), 10))
	}
	u.RawQuery = q.Encode()
	return u.String()
}
