package engine

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/attune-dev/attune/internal/lua"

	"github.com/attune-dev/attune/behaviors"
	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/internal/progcache"
	"github.com/attune-dev/attune/internal/workers"
	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/scheme"
	"github.com/attune-dev/attune/store"
)

// Version is part of the compile cache key: a new engine never reuses a
// proto compiled by another.
const Version = "attune-1"

// ReadFunc answers admit/read KEY for the host.
type ReadFunc func(ctx context.Context, key string) (any, error)

// FloorFunc is the host's floor: it sees the unwrapped argument and every
// mark still present, and refuses by returning refused = true.
type FloorFunc func(ctx context.Context, c FloorCall) (reason string, refused bool)

// FloorCall is what the floor sees.
type FloorCall struct {
	Instance string
	Session  string
	CallID   string
	Path     string
	Args     any
	Marks    []string
}

// CoreCall is the call a host core serves: which instance and session,
// the call's id, the tool's path, the (possibly rewritten) arguments and
// the marks the guards left on it.
type CoreCall struct {
	Instance string
	Session  string
	// CallID is the call's id: the host's ToolCall.CallID, or the one the
	// engine made. On the fast path (no guard or hook, the default floor,
	// no turn open) the engine makes none: CallID is the host's, or "".
	CallID string
	Path   string
	Args   any
	Marks  []string
}

// CoreFunc is a host tool's core. Its ctx is done when the host's ctx is,
// or when [engine] host_timeout passes (Engine.HostTimeout; on the fast
// path, in a turn or not, the host's ctx is passed as is: no script waits
// for the core there); a core that returns an error, or
// panics, fails its call (CodeCore).
type CoreFunc func(ctx context.Context, c CoreCall) (any, error)

// HostTool is a tool whose core the host provides.
type HostTool struct {
	Path    string
	Effects []string
	Core    CoreFunc
}

// Options build an Engine.
type Options struct {
	// Config is the loaded configuration (config.Load); required.
	Config *config.Config
	// Store overrides the store named by Config.Engine.Store.
	Store store.Store
	// Packs are searched before the engine's own pack, after
	// Config.Engine.Packs (a scenario's scratch pack goes here, first).
	Packs []pin.Pack
	// PacksFirst are searched before everything else.
	PacksFirst []pin.Pack
	// Read answers admit/read; nil answers nil.
	Read ReadFunc
	// Floor replaces the default floor (which refuses the marks of
	// Config.Floor.RefuseMarks).
	Floor FloorFunc
	// Logger receives what scripts print and what the engine notes.
	Logger *slog.Logger
	// Observer hears of registrations and their runs (coverage); nil: none.
	Observer Observer
	// HostTimeout overrides [engine] host_timeout: how long one host
	// callback (Read, Floor, a host core) may take.
	HostTimeout time.Duration
	// Libraries expose the host's own Go values to behaviors (HostLibrary).
	Libraries []HostLibrary
	// Notes, when set, hears of every note as it is emitted (not in a
	// replay), with the emitting instance. Called on the emitting
	// goroutine: it must return quickly and not call into the engine.
	Notes func(instance string, n Note)
	// JournalDelay is how long journal entries written behind a call (a
	// tool call inside a turn, a host method call outside one) wait before
	// they are written, so that the calls made meanwhile share one store
	// append (session.Journal.SetBehindDelay); 0 writes them at once.
	// What returns durable (boundaries, methods inside a turn) is not
	// delayed.
	JournalDelay time.Duration
	// Trace hears every step of every tool chain (what `attune explain`
	// prints); nil: none, at no cost (trace.go).
	Trace Tracer
	// Print hears every line a behavior prints or logs (not in a replay),
	// bounded (trace.go); it must return quickly and not call into the
	// engine. The lines reach Logger as well.
	Print func(Printed)
}

// Engine holds the configuration, the store, the packs, the host's tools
// and the live instances. Safe for concurrent use.
type Engine struct {
	cfg   *config.Config
	st    store.Store
	owns  bool // the engine opened the store and closes it
	packs pin.Packs
	read  ReadFunc
	floor FloorFunc
	// markFloor: the floor is the default one, which refuses only marks.
	markFloor  bool
	log        *slog.Logger
	budget     time.Duration
	obs        Observer
	hostWait   time.Duration // host_timeout
	epoch      time.Time     // host callback deadlines are read as time since (lazyctx.go)
	onNote     func(string, Note)
	tracer     Tracer            // Options.Trace
	onPrint    func(Printed)     // Options.Print
	jdelay     time.Duration     // Options.JournalDelay
	stateEvery int               // entries between stored session states; 0: stateEvery (sessionsnapshot.go)
	lib        *luabind.Library  // the forms, invoke and the host's libraries
	watchdog   *luabind.Watchdog // engine.memory_limit; nil when off

	protoMu      sync.Mutex
	protos       map[string]*protoEntry
	progs        *progcache.Cache // compiled programs on disk (progcache.go); nil: off
	cacheOffOnce sync.Once

	waits waitGraph // the threads waiting for registries (statelock.go)

	mu        sync.Mutex
	tools     map[string]*HostTool
	toolsGen  atomic.Int64
	instances map[string]*Instance
	owners    *ownerCache
	calls     *queryRecords // query call records made outside turns (memory only)
	feed      *subFeed      // others' actions to this engine's subscriptions; nil when the store announces none

	identOnce sync.Once // Identity
	ident     Identity
	identJSON []byte // `,"by":AUTHOR,"host":HOST,"at":`

	leaseOnce sync.Once // lease.go: the renewals started
	closeOnce sync.Once
	done      chan struct{} // closed by Close
	workers   *workers.Pool // run boundary hooks of several registries at once
	seq       atomic.Int64
	// liveStates counts the Lua states of this engine's registries that are
	// open (tests watch it for leaks).
	liveStates atomic.Int64
}

type protoEntry struct {
	once  sync.Once
	proto *lua.FunctionProto
	err   error
}

// New builds an engine. It opens the configured store unless Options.Store
// is given.
func New(ctx context.Context, o Options) (*Engine, error) {
	if o.Config == nil {
		return nil, errors.New("engine: Options.Config is required (config.Load)")
	}
	e := &Engine{
		cfg:       o.Config,
		st:        o.Store,
		read:      o.Read,
		floor:     o.Floor,
		log:       o.Logger,
		obs:       o.Observer,
		budget:    o.Config.Engine.CallbackBudget,
		protos:    map[string]*protoEntry{},
		tools:     map[string]*HostTool{},
		instances: map[string]*Instance{},
	}
	if e.budget <= 0 {
		e.budget = time.Second
	}
	e.onNote = o.Notes
	e.tracer, e.onPrint = o.Trace, o.Print
	e.jdelay = o.JournalDelay
	e.lib = formsLib()
	if len(o.Libraries) > 0 {
		host, err := hostFuncs(o.Libraries)
		if err != nil {
			return nil, err
		}
		e.lib = luabind.NewLibrary(append(append(append([]*luabind.Func(nil), forms...), invokeFunc), host...))
		e.lib.Hints = scheme.FormNames()
	}
	e.epoch = time.Now()
	e.hostWait = o.HostTimeout
	if e.hostWait <= 0 {
		e.hostWait = o.Config.Engine.HostTimeout
	}
	if e.hostWait <= 0 {
		e.hostWait = config.DefaultHostTimeout
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.packs = append(e.packs, o.PacksFirst...)
	for _, dir := range o.Config.Engine.Packs {
		e.packs = append(e.packs, pin.Pack{Name: dir, FS: os.DirFS(dir)})
	}
	e.packs = append(e.packs, o.Packs...)
	e.packs = append(e.packs, pin.Pack{Name: "behaviors", ID: pin.EnginePackID, FS: behaviors.FS})
	// R8.2: nothing starts on a bad config, a program no pack holds included.
	if err := o.Config.Validate(func(name string) bool { _, _, ok := e.packs.Find(name); return ok }); err != nil {
		return nil, err
	}
	if e.floor == nil {
		// The default floor refuses only calls that carry one of the
		// configured marks: a call with no marks (every fast-path call)
		// cannot be refused by it, so the fast path skips it.
		e.markFloor = true
		marks := o.Config.Floor.RefuseMarks
		e.floor = func(_ context.Context, c FloorCall) (string, bool) {
			for _, m := range c.Marks {
				for _, r := range marks {
					if m == r {
						return "the floor refuses calls marked " + m, true
					}
				}
			}
			return "", false
		}
	}
	if e.st == nil {
		st, err := OpenStore(ctx, o.Config)
		if err != nil {
			return nil, err
		}
		e.st, e.owns = st, true
	}
	e.progs = e.programCache()
	e.owners = newOwnerCache()
	e.calls = newQueryRecords()
	e.feed = newSubFeed(e)
	e.done = make(chan struct{})
	e.workers = workers.New(64)
	if lim := o.Config.Engine.MemoryLimit; lim > 0 {
		e.watchdog = luabind.NewWatchdog(uint64(lim))
	}
	return e, nil
}

// Close closes the live instances and, when the engine opened it, the store.
func (e *Engine) Close() error {
	e.feed.close()
	e.closeOnce.Do(func() { close(e.done) })
	e.mu.Lock()
	insts := make([]*Instance, 0, len(e.instances))
	for _, i := range e.instances {
		insts = append(insts, i)
	}
	e.instances = map[string]*Instance{}
	e.mu.Unlock()
	for _, i := range insts {
		i.release()
	}
	e.workers.Close()
	if e.watchdog != nil {
		e.watchdog.Close()
		e.watchdog = nil
	}
	if e.owns {
		return e.st.Close()
	}
	return nil
}

// HostTimeout is how long one host callback may take.
func (e *Engine) HostTimeout() time.Duration { return e.hostWait }

// Store returns the engine's store.
func (e *Engine) Store() store.Store { return e.st }

// Config returns the engine's configuration.
func (e *Engine) Config() *config.Config { return e.cfg }

// Packs returns the search order of packs, the engine's own last.
func (e *Engine) Packs() pin.Packs { return e.packs }

// RegisterTool adds (or replaces) a host tool. Instances resolve their
// tool tables again at their next call.
func (e *Engine) RegisterTool(t HostTool) error {
	if t.Path == "" || t.Core == nil {
		return errorf(CodeInvalid, "engine: a host tool needs a path and a core (path %q)", t.Path)
	}
	e.mu.Lock()
	c := t
	e.tools[t.Path] = &c
	e.mu.Unlock()
	e.toolsGen.Add(1)
	return nil
}

func (e *Engine) hostTools() map[string]*HostTool {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]*HostTool, len(e.tools))
	for k, v := range e.tools {
		out[k] = v
	}
	return out
}

// Instance returns a live instance by id.
func (e *Engine) Instance(id string) (*Instance, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	i, ok := e.instances[id]
	return i, ok
}

// compile returns the shared proto of a source, compiled once per
// (engine version, sha256, language).
func (e *Engine) compile(file, sha string, src []byte) (*lua.FunctionProto, error) {
	key := Version + "/" + sha + "/" + file
	e.protoMu.Lock()
	pe, ok := e.protos[key]
	if !ok {
		pe = &protoEntry{}
		e.protos[key] = pe
	}
	e.protoMu.Unlock()
	pe.once.Do(func() {
		if pe.proto = e.cachedProto(file, sha, src); pe.proto != nil {
			return
		}
		code := src
		if isScheme(file) {
			lowered, err := lowerScheme(file, src)
			if err != nil {
				pe.err = err
				return
			}
			code = []byte(lowered)
		}
		pe.proto, pe.err = luabind.Compile(file, code)
		if pe.err == nil {
			e.keepProto(file, sha, src, pe.proto)
		}
	})
	return pe.proto, pe.err
}

func isScheme(file string) bool {
	return len(file) > 4 && file[len(file)-4:] == ".scm"
}

func (e *Engine) nextID(prefix string) string {
	return prefix + strconv.FormatInt(e.seq.Add(1), 10)
}

var _ fs.FS = behaviors.FS
