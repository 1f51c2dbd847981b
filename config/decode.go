package config

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/BurntSushi/toml"

	"github.com/attune-dev/attune/internal/tomlx"
)

const (
	// maxErrors bounds the problems one load reports.
	maxErrors = 100
	// maxProbes bounds the key positions one load looks up. Each look-up
	// costs time in proportion to the file's size (see probe), so a hostile
	// file with thousands of keys gets unknown lines rather than a slow load.
	maxProbes = 256
	// maxExactInt is the largest integer a float64 (a Lua number) holds
	// exactly.
	maxExactInt = 1 << 53
)

// The keys of each table of the schema.
var (
	topKeys    = []string{"engine", "floor", "bots", "harness", "identity"}
	identKeys  = []string{"author", "host"}
	engineKeys = []string{"store", "packs", "project", "callback_budget", "host_timeout", "memory_limit", "max_note_bytes", "max_boundary_note_bytes", "pool_max_conns", "connect_timeout", "statement_timeout", "instance_lease", "program_cache", "program_cache_size"}
	floorKeys  = []string{"refuse_marks"}
	botKeys    = []string{"behaviors", "ceiling", "grants", "retry_budget", "config"}
)

// decoder walks one configuration table, collecting problems.
//
// Values come from decoding the table into `any`. Key positions are not
// part of toml.MetaData's API (v1.6.0 keeps them private); they surface only
// in the toml.ParseError that MetaData.PrimitiveDecode returns when a
// toml.Unmarshaler fails, whose Position is that of the key being decoded.
// So the decoder reaches the toml.Primitive of a key (decoding each table on
// the way into map[string]toml.Primitive) and decodes it into a probe that
// always fails.
type decoder struct {
	file     string
	md       *toml.MetaData
	rootPrim toml.Primitive
	root     []string // the key of rootPrim in md

	kids   map[string]map[string]toml.Primitive // table key -> its children
	lines  map[string]int                       // key -> line; 0 when unknown
	probes int
	errs   []*Error
}

func newDecoder(file string, md *toml.MetaData, prim toml.Primitive, root []string) *decoder {
	return &decoder{
		file:     file,
		md:       md,
		rootPrim: prim,
		root:     root,
		kids:     map[string]map[string]toml.Primitive{},
		lines:    map[string]int{},
	}
}

// errorf records a problem at p.
func (d *decoder) errorf(p path, format string, args ...any) {
	switch {
	case len(d.errs) > maxErrors:
		return
	case len(d.errs) == maxErrors:
		d.errs = append(d.errs, &Error{File: d.file, Msg: fmt.Sprintf("too many problems; stopped after %d", maxErrors)})
		return
	}
	d.errs = append(d.errs, &Error{
		File: d.file,
		Line: d.line(p),
		Path: p.display(d.root),
		Msg:  fmt.Sprintf(format, args...),
	})
}

// line returns the line of p's key, or when the file never writes that key
// itself (the implicit table bots in [bots.main]), of the first key inside
// it; 0 when unknown.
func (d *decoder) line(p path) int {
	ks := p.keys()
	s := toml.Key(ks).String()
	if l, ok := d.lines[s]; ok {
		return l
	}
	l := d.probe(ks)
	if l == 0 && d.probes < maxProbes {
		d.probes++
		full := append(slices.Clip(d.root), ks...)
		for _, k := range d.md.Keys() {
			if len(k) > len(full) && slices.Equal(k[:len(full)], full) {
				l = d.probe(k[len(d.root):])
				break
			}
		}
	}
	d.lines[s] = l
	return l
}

// probe returns the line of the key ks (below the root), or 0.
func (d *decoder) probe(ks []string) int {
	if d.probes >= maxProbes {
		return 0
	}
	prim, ok := d.prim(ks)
	if !ok {
		return 0
	}
	d.probes++
	return tomlx.Line(d.md, prim)
}

// prim returns the toml.Primitive of the key ks below the root.
func (d *decoder) prim(ks []string) (toml.Primitive, bool) {
	cur := d.rootPrim
	for i, k := range ks {
		t := toml.Key(ks[:i]).String()
		m, ok := d.kids[t]
		if !ok {
			if err := d.md.PrimitiveDecode(cur, &m); err != nil {
				m = nil
			}
			d.kids[t] = m
		}
		if cur, ok = m[k]; !ok {
			return toml.Primitive{}, false
		}
	}
	return cur, true
}

// markAll marks every key below it decoded: toml marks all keys of a table
// an Unmarshaler accepted.
type markAll struct{}

func (*markAll) UnmarshalTOML(any) error { return nil }

func (d *decoder) markDecoded() {
	if !reflect.ValueOf(d.rootPrim).IsZero() {
		_ = d.md.PrimitiveDecode(d.rootPrim, &markAll{})
	}
}

// decode walks the configuration and returns what it holds, with defaults
// for what it leaves out.
func (d *decoder) decode(dir string) *Config {
	cfg := Default(dir)
	cfg.File = d.file
	cfg.prefix = d.root
	var raw any
	// A zero Primitive is a table the document does not hold: decoding it
	// into an interface would panic in the toml package.
	if !reflect.ValueOf(d.rootPrim).IsZero() {
		if err := d.md.PrimitiveDecode(d.rootPrim, &raw); err != nil {
			d.errorf(nil, "cannot decode: %v", err)
			return cfg
		}
	}
	top := map[string]any{}
	if raw != nil {
		var ok bool
		if top, ok = d.table(nil, raw); !ok {
			return cfg
		}
	}
	for _, k := range sortedKeys(top) {
		p, v := path{}.key(k), top[k]
		d.line(p)
		switch k {
		case "engine":
			d.engine(cfg, p, v)
		case "floor":
			d.floor(cfg, p, v)
		case "bots":
			d.bots(cfg, p, v)
		case "harness":
			d.harness(cfg, p, v)
		case "identity":
			d.identity(cfg, p, v)
		default:
			d.unknown(p, topKeys)
		}
	}
	for k, l := range d.lines {
		if l > 0 {
			cfg.lines[k] = l
		}
	}
	return cfg
}

func (d *decoder) engine(cfg *Config, ep path, v any) {
	t, ok := d.table(ep, v)
	if !ok {
		return
	}
	for _, k := range sortedKeys(t) {
		p, v := ep.key(k), t[k]
		d.line(p)
		switch k {
		case "store":
			s, ok := d.str(p, v)
			if !ok {
				break
			}
			kind, target, err := ParseStore(s, cfg.Dir)
			switch {
			case err != nil:
				d.errorf(p, "%v", err)
			case kind == StoreMemory:
				cfg.Engine.Store = "memory:"
			case kind == StoreSQLite:
				cfg.Engine.Store = "sqlite:" + target
			default:
				cfg.Engine.Store = s
			}
		case "packs":
			cfg.Engine.Packs = d.names(p, v, "pack folder", notEmpty, func(s string) string {
				abs, err := absPath(s, cfg.Dir)
				if err != nil {
					return s
				}
				return abs
			})
		case "project":
			if s, ok := d.str(p, v); ok {
				if s == "" {
					d.errorf(p, "want a non-empty string")
				} else {
					cfg.Engine.Project = s
				}
			}
		case "callback_budget":
			if dur, ok := d.duration(p, v, "1s", MaxCallbackBudget); ok {
				cfg.Engine.CallbackBudget = dur
			}
		case "host_timeout":
			if dur, ok := d.duration(p, v, "30s", MaxHostTimeout); ok {
				cfg.Engine.HostTimeout = dur
			}
		case "memory_limit":
			if n, ok := d.memoryLimit(p, v); ok {
				cfg.Engine.MemoryLimit = n
			}
		case "pool_max_conns":
			if n, ok := v.(int64); ok && n >= 1 && n <= 1000 {
				cfg.Engine.PoolMaxConns = int(n)
			} else {
				d.errorf(p, "want a number of connections from 1 to 1000, got %s", tomlx.Describe(v))
			}
		case "connect_timeout":
			if dur, ok := d.duration(p, v, "10s", time.Hour); ok {
				cfg.Engine.ConnectTimeout = dur
			}
		case "statement_timeout":
			if dur, ok := d.duration(p, v, "30s", 24*time.Hour); ok {
				cfg.Engine.StatementTimeout = dur
			}
		case "instance_lease":
			if dur, ok := d.duration(p, v, "15s", time.Hour); ok {
				if dur < time.Second {
					d.errorf(p, "want a duration of at least 1s, got %s", quote(v.(string)))
				} else {
					cfg.Engine.InstanceLease = dur
				}
			}
		case "max_note_bytes":
			if n, ok := d.noteSize(p, v); ok {
				cfg.Engine.MaxNoteBytes = n
			}
		case "program_cache":
			d.programCache(cfg, p, v)
		case "program_cache_size":
			if n, ok := d.programCacheSize(p, v); ok {
				cfg.Engine.ProgramCacheSize = n
			}
		case "max_boundary_note_bytes":
			if n, ok := d.noteSize(p, v); ok {
				cfg.Engine.MaxBoundaryNoteBytes = n
			}
		default:
			d.unknown(p, engineKeys)
		}
	}
}

func (d *decoder) identity(cfg *Config, ip path, v any) {
	t, ok := d.table(ip, v)
	if !ok {
		return
	}
	for _, k := range sortedKeys(t) {
		p, v := ip.key(k), t[k]
		d.line(p)
		s, isStr := "", false
		switch k {
		case "author", "host":
			if s, isStr = d.str(p, v); isStr && (s == "" || len(s) > 200) {
				d.errorf(p, "want a non-empty string of at most 200 bytes")
				isStr = false
			}
		default:
			d.unknown(p, identKeys)
			continue
		}
		if !isStr {
			continue
		}
		if k == "author" {
			cfg.Identity.Author = s
		} else {
			cfg.Identity.Host = s
		}
	}
}

func (d *decoder) floor(cfg *Config, fp path, v any) {
	t, ok := d.table(fp, v)
	if !ok {
		return
	}
	for _, k := range sortedKeys(t) {
		p, v := fp.key(k), t[k]
		d.line(p)
		switch k {
		case "refuse_marks":
			cfg.Floor.RefuseMarks = d.names(p, v, "mark", notEmpty, nil)
		default:
			d.unknown(p, floorKeys)
		}
	}
}

func (d *decoder) bots(cfg *Config, bp path, v any) {
	t, ok := d.table(bp, v)
	if !ok {
		return
	}
	for _, name := range sortedKeys(t) {
		p := bp.key(name)
		d.line(p)
		if name == "" {
			d.errorf(p, "want a bot name, got an empty key")
			continue
		}
		if b := d.bot(p, name, t[name]); b != nil {
			cfg.Bots[name] = b
		}
	}
	cfg.BotOrder = d.order(bp, cfg.Bots)
}

// order returns the names of bots in the order the file first mentions
// them (md.Keys keeps the order of the document).
func (d *decoder) order(bp path, bots map[string]*Bot) []string {
	full := append(slices.Clip(d.root), bp.keys()...)
	seen := make(map[string]bool, len(bots))
	order := make([]string, 0, len(bots))
	for _, k := range d.md.Keys() {
		if len(k) > len(full) && slices.Equal(k[:len(full)], full) {
			name := k[len(full)]
			if _, ok := bots[name]; ok && !seen[name] {
				seen[name] = true
				order = append(order, name)
			}
		}
	}
	for _, name := range sortedKeys(bots) {
		if !seen[name] {
			order = append(order, name)
		}
	}
	return order
}

func (d *decoder) bot(bp path, name string, v any) *Bot {
	t, ok := d.table(bp, v)
	if !ok {
		return nil
	}
	b := &Bot{
		Name:        name,
		Behaviors:   []string{},
		Ceiling:     []string{},
		Grants:      []string{},
		RetryBudget: DefaultRetryBudget,
		Config:      map[string]map[string]any{},
	}
	behaviorsOK := true
	var configPath path
	for _, k := range sortedKeys(t) {
		p, v := bp.key(k), t[k]
		d.line(p)
		switch k {
		case "behaviors":
			n := len(d.errs)
			b.Behaviors = d.names(p, v, "program", programNameProblem, nil)
			behaviorsOK = len(d.errs) == n
		case "ceiling":
			b.Ceiling = d.names(p, v, "effect", notEmpty, nil)
		case "grants":
			b.Grants = d.names(p, v, "grant", notEmpty, nil)
		case "retry_budget":
			n, ok := v.(int64)
			switch {
			case !ok:
				d.errorf(p, "want an integer >= 0, got %s", tomlx.Describe(v))
			case n < 0:
				d.errorf(p, "want an integer >= 0, got %d", n)
			case n > MaxRetryBudget:
				d.errorf(p, "want an integer of at most %d, got %d", MaxRetryBudget, n)
			default:
				b.RetryBudget = int(n)
			}
		case "config":
			configPath = p
			ct, ok := d.table(p, v)
			if !ok {
				break
			}
			for _, prog := range sortedKeys(ct) {
				pp := p.key(prog)
				d.line(pp)
				if pt, ok := d.table(pp, ct[prog]); ok {
					b.Config[prog] = d.plainTable(pp, pt)
				}
			}
		default:
			d.unknown(p, botKeys)
		}
	}
	if behaviorsOK && configPath != nil {
		for _, prog := range sortedKeys(b.Config) {
			if !slices.Contains(b.Behaviors, prog) {
				d.errorf(configPath.key(prog), "configures program %s, which this bot does not select%s",
					quote(prog), tomlx.Suggest(prog, b.Behaviors))
			}
		}
	}
	return b
}

func (d *decoder) unknown(p path, known []string) {
	d.errorf(p, "unknown key%s", tomlx.Suggest(p[len(p)-1].key, known))
}

func (d *decoder) table(p path, v any) (map[string]any, bool) {
	if m, ok := v.(map[string]any); ok {
		return m, true
	}
	d.errorf(p, "want a table, got %s", tomlx.Describe(v))
	return nil, false
}

func (d *decoder) str(p path, v any) (string, bool) {
	if s, ok := v.(string); ok {
		return s, true
	}
	d.errorf(p, "want a string, got %s", tomlx.Describe(v))
	return "", false
}

// names reads a list of strings: each must pass check (which returns a
// problem or ""), and no two may be equal after canon (nil: as written).
// It returns the strings that passed, in order, canonicalized.
func (d *decoder) names(p path, v any, what string, check func(string) string, canon func(string) string) []string {
	out := []string{}
	list, ok := v.([]any)
	if !ok {
		d.errorf(p, "want a list of strings, got %s", tomlx.Describe(v))
		return out
	}
	first := map[string]int{}
	for i, e := range list {
		ep := p.index(i)
		s, ok := e.(string)
		if !ok {
			d.errorf(ep, "want a string, got %s", tomlx.Describe(e))
			continue
		}
		if problem := check(s); problem != "" {
			d.errorf(ep, "%s", problem)
			continue
		}
		c := s
		if canon != nil {
			c = canon(s)
		}
		if j, dup := first[c]; dup {
			d.errorf(ep, "duplicate %s %s (also at [%d])", what, quote(s), j+1)
			continue
		}
		first[c] = i
		out = append(out, c)
	}
	return out
}

func notEmpty(s string) string {
	if s == "" {
		return "want a non-empty string"
	}
	return ""
}

// programNameProblem checks a program name: a file stem of letters,
// digits, '_', '-' and '.', not starting with '.'.
func programNameProblem(s string) string {
	if s == "" {
		return "want a program name, got an empty string"
	}
	for _, ext := range []string{".lua", ".scm"} {
		if stem, ok := strings.CutSuffix(s, ext); ok && stem != "" && programNameProblem(stem) == "" {
			return fmt.Sprintf("want a program name (the file stem), got %s; did you mean %s?", quote(s), quote(stem))
		}
	}
	ok := s[0] != '.'
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' && r != '.' {
			ok = false
		}
	}
	if !ok {
		return fmt.Sprintf("want a program name (a file stem of letters, digits, '_', '-', '.'), got %s", quote(s))
	}
	return ""
}

// plainTable converts a program's configuration table to plain Go data.
func (d *decoder) plainTable(p path, t map[string]any) map[string]any {
	out := make(map[string]any, len(t))
	for _, k := range sortedKeys(t) {
		if v, ok := d.plain(p.key(k), t[k]); ok {
			out[k] = v
		}
	}
	return out
}

// plain converts one TOML value to plain Go data: numbers become float64,
// datetimes their TOML text, arrays []any, tables map[string]any.
func (d *decoder) plain(p path, v any) (any, bool) {
	if len(d.root)+len(p) > MaxDepth {
		d.errorf(p, "nested deeper than %d levels", MaxDepth)
		return nil, false
	}
	switch v := v.(type) {
	case map[string]any:
		return d.plainTable(p, v), true
	case []map[string]any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = d.plainTable(p.index(i), e)
		}
		return out, true
	case []any:
		out := make([]any, 0, len(v))
		ok := true
		for i, e := range v {
			pe, eok := d.plain(p.index(i), e)
			ok = ok && eok
			out = append(out, pe)
		}
		return out, ok
	case int64:
		if v > maxExactInt || v < -maxExactInt {
			d.errorf(p, "integer %d is too large to be held exactly as a number (the limit is 2^53)", v)
			return nil, false
		}
		return float64(v), true
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			d.errorf(p, "want a finite number, got %s", tomlx.Describe(v))
			return nil, false
		}
		return v, true
	case string, bool:
		return v, true
	case time.Time:
		return formatTime(v), true
	}
	d.errorf(p, "unsupported value %s", tomlx.Describe(v))
	return nil, false
}

// formatTime writes a TOML datetime back in its TOML form. The toml package
// marks local datetimes, dates and times by the name of their location.
func formatTime(t time.Time) string {
	switch t.Location().String() {
	case "datetime-local":
		return t.Format("2006-01-02T15:04:05.999999999")
	case "date-local":
		return t.Format("2006-01-02")
	case "time-local":
		return t.Format("15:04:05.999999999")
	}
	return t.Format(time.RFC3339Nano)
}

// quote quotes s for a message, shortened when long.
func quote(s string) string {
	const limit = 64
	if len(s) <= limit {
		return strconv.Quote(s)
	}
	cut := limit
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "..."
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// sortedKeys returns the keys of m in sorted order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
