package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/attune-dev/attune/internal/tomlx"
	"github.com/attune-dev/attune/luabind"
)

// Defaults.
const (
	DefaultFile           = "attune.toml"
	DefaultStore          = ".attune/state.db" // beside the configuration file
	DefaultProject        = "default"
	DefaultCallbackBudget = time.Second
	DefaultHostTimeout    = 30 * time.Second
	DefaultRetryBudget    = 2
	// DefaultMemoryLimit is engine.memory_limit's default: the Go heap over
	// which running callbacks are cancelled.
	DefaultMemoryLimit = 2 << 30
	// DefaultMaxNoteBytes and DefaultMaxBoundaryNoteBytes are
	// engine.max_note_bytes and engine.max_boundary_note_bytes' defaults:
	// the text of one note, and of the notes one program emits at one
	// boundary or tool call (docs/limits.md).
	DefaultMaxNoteBytes         = 64 << 10
	DefaultMaxBoundaryNoteBytes = 256 << 10
)

// Config is one loaded configuration. It is immutable after Load, Parse or
// Decode returns and safe for concurrent reads.
type Config struct {
	File     string // the path it was loaded from; the scenario file for an inline configuration; "" when none
	Dir      string // the absolute folder relative paths resolve against
	Engine   Engine
	Floor    Floor
	Identity Identity
	Bots     map[string]*Bot
	BotOrder []string // the bots' names in order of appearance
	// Hooks holds the [harness.DIALECT] tables of `attune hook` by dialect
	// (claude, codex, cursor, gemini); see Hook.
	Hooks map[string]*HookHarness
	// MCP is the [harness.mcp] table of `attune mcp`.
	MCP MCP
	// Reads is the [harness.reads] table: the admit/read keys `attune hook`
	// and `attune mcp` answer (nil: none).
	Reads *Reads
	// Warm is [harness] warm: the first hook event with no warm server
	// for this configuration starts one (`attune hook serve --socket`),
	// and later events are handed to it (harness/handoff.go).
	Warm bool

	prefix []string       // the key holding an inline configuration, e.g. ["config"]
	lines  map[string]int // key path (without the prefix) -> line
}

// Engine is the [engine] table.
type Engine struct {
	// Store is the store spec, normalized: "memory:", "sqlite:ABSPATH" or the
	// postgres URL as written. ParseStore(Store, "") splits it.
	Store string
	// Packs are the pack folders as absolute paths, in search order. The
	// engine's own pack is not among them.
	Packs          []string
	Project        string
	CallbackBudget time.Duration
	// HostTimeout bounds each host callback (admit/read, the floor, a host
	// core): past it the callback's ctx is done and its call fails.
	HostTimeout time.Duration
	// PoolMaxConns, ConnectTimeout and StatementTimeout are a PostgreSQL
	// store's connection pool size, connect timeout and statement timeout
	// (0: the store URL's, else the defaults: max(4, GOMAXPROCS)
	// connections, no timeouts). The store URL's own pool_max_conns,
	// connect_timeout or statement_timeout wins over these.
	PoolMaxConns     int
	ConnectTimeout   time.Duration
	StatementTimeout time.Duration
	// InstanceLease is how long an instance id stays leased to this host
	// after its last renewal, on a store several machines share (0: 15s).
	InstanceLease time.Duration
	// MemoryLimit is the host's Go heap, in bytes, over which the engine
	// cancels running callbacks (a `memory` failure); 0 turns it off.
	MemoryLimit int64
	// MaxNoteBytes bounds the text of one note (notify); MaxBoundaryNoteBytes
	// the notes one program emits while one boundary or tool call runs.
	// Over either, notify fails with a memory error naming the program.
	MaxNoteBytes         int64
	MaxBoundaryNoteBytes int64
	// ProgramCache is engine.program_cache: where compiled programs are
	// kept between processes. "" is the default place (beside an SQLite
	// store, else the user's cache folder), "off" turns the cache off,
	// anything else is the folder, absolute (docs/program-cache.md).
	ProgramCache string
	// ProgramCacheSize is engine.program_cache_size: the cache folder's
	// cap in bytes (0: the default, 64MiB).
	ProgramCacheSize int64
}

// Floor is the [floor] table: the default host floor refuses a tool call
// that still carries one of RefuseMarks.
type Floor struct {
	RefuseMarks []string
}

// Identity is the [identity] table: who and where actions are appended
// from (each owner action records them, with its time). Empty: the
// engine's defaults (engine.Identity): git's user.email, else $USER, and
// the machine's hostname.
type Identity struct {
	Author string
	Host   string
}

// Bot is one [bots.NAME] table. Like the Config that holds it, it is
// read-only after loading and safe for concurrent reads.
type Bot struct {
	Name        string
	Behaviors   []string // program names (file stems), in pin order; no duplicates
	Ceiling     []string // effects this bot's tool calls may have
	Grants      []string // OWNER.METHOD, or a custom grant name
	RetryBudget int
	// Config holds one table per program, from [bots.NAME.config.PROGRAM].
	// Values are plain Go data: nil, bool, float64 (every TOML number),
	// string (also TOML datetimes, in their TOML form), []any and
	// map[string]any. Read-only; see ConfigFor.
	Config map[string]map[string]any
}

// ConfigFor returns a deep copy of the bot's table for program, never nil.
func (b *Bot) ConfigFor(program string) map[string]any {
	t := b.Config[program]
	out := make(map[string]any, len(t))
	for k, v := range t {
		out[k] = luabind.CopyPlain(v)
	}
	return out
}

// Default returns the configuration of an empty file in dir: the store
// dir/.attune/state.db, no packs, project "default" (Load replaces it
// with the repository's, RepoProject, when the file names none), a callback budget of
// one second, an empty floor and no bots.
func Default(dir string) *Config {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return &Config{
		Dir: dir,
		Engine: Engine{
			Store:          "sqlite:" + filepath.Join(dir, DefaultStore),
			Packs:          []string{},
			Project:        DefaultProject,
			CallbackBudget: DefaultCallbackBudget,
			HostTimeout:    DefaultHostTimeout,
			MemoryLimit:    DefaultMemoryLimit,

			MaxNoteBytes:         DefaultMaxNoteBytes,
			MaxBoundaryNoteBytes: DefaultMaxBoundaryNoteBytes,
		},
		Floor:    Floor{RefuseMarks: []string{}},
		MCP:      MCP{CallTimeout: DefaultMCPCallTimeout, StartTimeout: DefaultMCPStartTimeout, MaxMessage: DefaultMCPMaxMessage, JournalDelay: DefaultMCPJournalDelay},
		Bots:     map[string]*Bot{},
		BotOrder: []string{},
		lines:    map[string]int{},
	}
}

// Load reads and parses the configuration file at path. Relative paths in
// it resolve against the file's folder. Errors are an *Error or a *List.
func Load(path string) (*Config, error) {
	cfg, err := LoadAll(path)
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// LoadAll is Load for a checker that reports every problem at once: when
// the file parses but its keys or values have problems, it returns what
// could be decoded beside the errors (the rest at its defaults), so the
// checks that need the packs can run too. A file that cannot be read or
// parsed returns no configuration.
func LoadAll(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read: " + unwrapPath(err).Error(), err: err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read: " + unwrapPath(err).Error(), err: err}
	}
	cfg, err := parse(path, data, true)
	if cfg != nil && cfg.lines["engine.project"] == 0 && cfg.Engine.Project == DefaultProject {
		cfg.Engine.Project = RepoProject(cfg.Dir) // never a shared "default"
	}
	return cfg, err
}

// unwrapPath drops the path from an *os.PathError: the Error names the
// file already.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Parse parses a configuration source. file names it in errors and its
// folder is the folder relative paths resolve against ("" means the working
// directory). Errors are an *Error (one problem) or a *List (several).
func Parse(file string, data []byte) (cfg *Config, err error) {
	return parse(file, data, false)
}

// parse is Parse; partial keeps what was decoded beside decoding errors.
func parse(file string, data []byte, partial bool) (cfg *Config, err error) {
	if err := CheckSource(file, data); err != nil {
		return nil, err
	}
	var prim toml.Primitive
	md, err := decodeTOML(data, &prim)
	if err != nil {
		return nil, SyntaxError(file, data, err)
	}
	dir := "."
	if file != "" {
		dir = filepath.Dir(file)
	}
	return decode(file, md, prim, "", dir, partial)
}

// SyntaxError turns an error of the TOML parser on data into an *Error with
// the file, line and column (file:3:7: message), for a host that parses a
// document holding an inline configuration itself. It returns nil for nil.
func SyntaxError(file string, data []byte, err error) *Error {
	if err == nil {
		return nil
	}
	var pe toml.ParseError
	if errors.As(err, &pe) {
		line, col := lineCol(data, pe.Position)
		return &Error{File: file, Line: line, Col: col, Msg: pe.Message, err: err}
	}
	return &Error{File: file, Msg: err.Error(), err: err}
}

// lineCol returns the line and byte column of a syntax error. The toml
// package's own column is one off for an error at the start of a line, so
// both are computed from the error's byte offset, which counts from after a
// UTF-8 byte order mark, as the parser does.
func lineCol(data []byte, pos toml.Position) (line, col int) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if pos.Start < 0 || pos.Start > len(data) || pos.Line < 1 {
		return pos.Line, pos.Col
	}
	before := data[:pos.Start]
	return 1 + bytes.Count(before, []byte{'\n'}), pos.Start - bytes.LastIndexByte(before, '\n')
}

// decodeTOML runs the TOML parser, turning a panic of the parser into an
// error: hostile input must fail, never crash the host.
func decodeTOML(data []byte, v any) (md toml.MetaData, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the TOML parser failed: %v", r)
		}
	}()
	return toml.NewDecoder(bytes.NewReader(data)).Decode(v)
}

// Decode reads a configuration held in an already parsed TOML document: prim
// is the value at keyPrefix (a dotted key of bare parts, "" for the whole
// document) of the document md describes, and file names that document.
// Relative paths resolve against dir. Errors name file, the line and the key
// path including the prefix (config.bots.main.ceilng).
//
// Decode marks every key under keyPrefix as decoded in md, so that the
// caller's md.Undecoded() lists only keys outside the configuration (Decode
// reports unknown keys inside it itself). md must not be in use by another
// goroutine during the call.
func Decode(file string, md toml.MetaData, prim toml.Primitive, keyPrefix string, dir string) (cfg *Config, err error) {
	return decode(file, md, prim, keyPrefix, dir, false)
}

func decode(file string, md toml.MetaData, prim toml.Primitive, keyPrefix string, dir string, partial bool) (cfg *Config, err error) {
	var root []string
	if keyPrefix != "" {
		root = strings.Split(keyPrefix, ".")
	}
	d := newDecoder(file, &md, prim, root)
	defer func() {
		if r := recover(); r != nil {
			cfg, err = nil, &Error{File: file, Path: keyPrefix, Msg: fmt.Sprintf("cannot decode: %v", r)}
		}
	}()
	cfg = d.decode(dir)
	d.markDecoded()
	if err := join(d.errs); err != nil {
		if partial {
			return cfg, err
		}
		return nil, err
	}
	return cfg, nil
}

// Validate runs the checks that need the packs: every program a bot selects
// must be held by a pack (hasProgram reports whether one does; nil skips
// this check), and every program configuration table must belong to a
// program the bot selects. Errors are an *Error or a *List, with the line
// when it is known.
func (c *Config) Validate(hasProgram func(name string) bool) error {
	var errs []*Error
	for _, name := range c.botNames() {
		b := c.Bots[name]
		if b == nil {
			continue
		}
		bp := path{}.key("bots").key(name)
		if hasProgram != nil {
			for i, p := range b.Behaviors {
				if !hasProgram(p) {
					errs = append(errs, c.errorAt(bp.key("behaviors").index(i), "no pack holds program "+quote(p)))
				}
			}
		}
		errs = append(errs, c.unselected(b)...)
	}
	return join(errs)
}

// botNames returns BotOrder, then the names of Bots it leaves out (a
// Config built by hand), sorted.
func (c *Config) botNames() []string {
	names := slices.Clone(c.BotOrder)
	ordered := make(map[string]bool, len(c.BotOrder)) // a file of thousands of bots: no scan per bot
	for _, name := range c.BotOrder {
		ordered[name] = true
	}
	for _, name := range sortedKeys(c.Bots) {
		if !ordered[name] {
			names = append(names, name)
		}
	}
	return names
}

// unselected reports configuration tables for programs b does not select.
func (c *Config) unselected(b *Bot) []*Error {
	var errs []*Error
	for _, p := range sortedKeys(b.Config) {
		if !slices.Contains(b.Behaviors, p) {
			at := path{}.key("bots").key(b.Name).key("config").key(p)
			errs = append(errs, c.errorAt(at,
				fmt.Sprintf("configures program %s, which this bot does not select%s", quote(p), tomlx.Suggest(p, b.Behaviors))))
		}
	}
	return errs
}

// Errorf returns an *Error about the key at keyPath (bots.main.grants[2],
// without the inline prefix), carrying this configuration's file, the line of
// that key (or of the closest enclosing key the file holds) and the full key
// path. Hosts use it to report problems found after loading, such as a grant
// that names no method.
func (c *Config) Errorf(keyPath string, format string, args ...any) *Error {
	return &Error{
		File: c.File,
		Line: c.Line(keyPath),
		Path: joinPrefix(c.prefix, keyPath),
		Msg:  fmt.Sprintf(format, args...),
	}
}

// Line returns the line of the key at keyPath (without the inline prefix;
// list indexes allowed, they give the line of the list), or of the closest
// enclosing key the file holds; 0 when unknown.
func (c *Config) Line(keyPath string) int {
	if i := strings.IndexByte(keyPath, '['); i >= 0 {
		keyPath = keyPath[:i]
	}
	for keyPath != "" {
		if l := c.lines[keyPath]; l > 0 {
			return l
		}
		i := strings.LastIndexByte(keyPath, '.')
		if i < 0 {
			break
		}
		keyPath = keyPath[:i]
	}
	return 0
}

func (c *Config) errorAt(p path, msg string) *Error {
	return &Error{File: c.File, Line: c.Line(p.keyString()), Path: p.display(c.prefix), Msg: msg}
}

func joinPrefix(prefix []string, keyPath string) string {
	if len(prefix) == 0 {
		return keyPath
	}
	return toml.Key(prefix).String() + "." + keyPath
}

// path is a key path: keys and list indexes.
type path []step

type step struct {
	key   string
	index int // when key == "" and isIdx
	isIdx bool
}

func (p path) key(k string) path {
	q := make(path, len(p), len(p)+1)
	copy(q, p)
	return append(q, step{key: k})
}

func (p path) index(i int) path {
	q := make(path, len(p), len(p)+1)
	copy(q, p)
	return append(q, step{index: i, isIdx: true})
}

// keys returns the leading keys of p, up to its first index: the TOML key
// whose position stands for p.
func (p path) keys() []string {
	var ks []string
	for _, s := range p {
		if s.isIdx {
			break
		}
		ks = append(ks, s.key)
	}
	return ks
}

// keyString is the TOML form of p.keys(), the key of Config.lines.
func (p path) keyString() string { return toml.Key(p.keys()).String() }

// display renders p after prefix: config.bots.main.behaviors[1] (the
// first program). List items count from 1 in every path the project
// prints: config key paths, schema paths, scenario keys.
func (p path) display(prefix []string) string {
	var b strings.Builder
	for _, k := range prefix {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(keyPart(k))
	}
	for _, s := range p {
		if s.isIdx {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index + 1)) // list items count from 1, as in schema paths
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(keyPart(s.key))
	}
	return b.String()
}

// keyPart writes one key part as TOML does, shortened when long.
func keyPart(k string) string {
	const limit = 64
	if len(k) <= limit {
		return toml.Key{k}.String()
	}
	cut := limit
	for cut > 0 && !utf8RuneStart(k[cut]) {
		cut--
	}
	return toml.Key{k[:cut]}.String() + "..."
}
