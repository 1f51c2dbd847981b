package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/internal/tomlx"
)

// ruleID is the form of a spec rule id.
var ruleID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^R[0-9]+\.[0-9]+$`) })

// maxFileSize bounds what Load reads.
const maxFileSize = 4 << 20

// Scenario is one loaded scenario file. Immutable after Load.
type Scenario struct {
	File  string // the path it was loaded from
	Name  string
	Rules []string
	// FailsWith, when set, marks a scenario that must fail with a report
	// containing every one of these texts.
	FailsWith []string
	Config    *config.Config
	// Programs are the files written into the scratch pack, by file name
	// relative to the pack (sorted by name).
	Programs []Program
	Host     Host
	// Owners are entries appended to project and global owners before the
	// first step, by owner address (NAME@project, NAME@global), sorted.
	Owners []OwnerSeed
	Steps  []*Step
}

// OwnerSeed is one [owners."NAME@SCOPE"] table: the log entries a shared
// owner holds before the first step (a recorded session's starting state).
type OwnerSeed struct {
	Owner   string
	Entries []any
}

// Answer is one answer of a host tool's core or of a read, in call order.
type Answer struct {
	Value   any
	Fail    string
	HasFail bool
}

// Program is one file of the scratch pack.
type Program struct {
	File   string
	Source string
}

// Host is the fake host a scenario declares.
type Host struct {
	Reads map[string]any
	// ReadAnswers answer admit/read KEY call by call, before Reads.
	ReadAnswers map[string][]Answer
	Tools       []HostTool // sorted by path
	// Floor is nil when the scenario gives no [host.floor]: the floor then
	// refuses the marks of config's [floor].
	Floor *Floor
}

// HostTool is one [host.tools."PATH"] table.
type HostTool struct {
	Path    string
	Effects []string
	Result  any
	Echo    bool
	Fail    string
	HasFail bool
	// Answers answer the core call by call; past them, Result, Echo or
	// Fail (a tool with answers and none of those fails the call).
	Answers    []Answer
	HasAnswers bool
}

// Floor is [host.floor].
type Floor struct {
	RefuseMarks []string
}

// Step is one [[step]] table. Fields that the op does not take are zero.
type Step struct {
	Index int // 1-based
	Line  int // the line of its [[step]] header
	Op    string

	Instance      string
	Bot           string
	Kind          string
	Session       string
	Parent        string
	Program       string
	Source        string
	Key           string
	Value         any
	Input         any
	ContextFresh  bool
	Path          string
	Args          any
	CallID        string
	HostContinue  bool
	Output        *string
	Addenda       []string
	Rounds        []Round
	MaxRounds     int
	Owner         string
	Method        string
	HostAuthority bool
	Name          string
	Text          string
	Child         string
	Note          string
	ToTurn        int
	// Harness is the harness data ({name, event}) the step's records
	// carry (a recorded hook session's)
	Harness any

	Expect *Expect // nil when the step has no expect table
	// ExpectLines are the lines of the expectation keys, when known.
	ExpectLines map[string]int
}

// Round is one element of a turn step's rounds.
type Round struct {
	Tools        []ToolCall
	Output       *string
	HostContinue bool
}

// ToolCall is one tool call of a round.
type ToolCall struct {
	Path string
	Args any
}

// Expect holds a step's expectations; a nil pointer (or nil any with its
// Has flag false) is a key the scenario did not give.
type Expect struct {
	Status    string
	Result    any
	HasResult bool
	// Error and Reason hold texts the message must each contain (the
	// scenario gives one string or a list of them).
	Error       []string
	HasError    bool
	Reason      []string
	HasReason   bool
	RefusedBy   *string
	Hidden      *bool
	Diagnostics []string
	HasDiags    bool
	// Diverged lists texts each contained in the replay's divergence at
	// the same position (same count); a replay step that gives it expects
	// those divergences, and they do not fail it.
	Diverged    []string
	HasDiverged bool
	Notes       []NoteWant
	HasNotes    bool
	Continue    *bool
	Rounds      *int
	CoreCalls   *int
	HostReads   *int
	Floor       *FloorWant
	Revision    *int64
	State       any
	HasState    bool
	// Verdict is a tool guard's verdict on a call ("allow", "ask", or
	// "none"); Halt a text the step's halt reason contains ("" with
	// HasHalt: any halt), NoHalt that the step did not halt.
	Verdict *string
	Halt    *string
	NoHalt  bool
}

// NoteWant is one expected note: its kind (when given) and a text the
// note's text contains (when given).
type NoteWant struct {
	Kind string
	Text string
	// HasText is set when the scenario gives text (an empty text matches
	// every note).
	HasText bool
}

// FloorWant is the floor expectation: Ran false means the floor never ran
// in the step; otherwise the arguments and marks it saw last.
type FloorWant struct {
	Ran      bool
	Args     any
	HasArgs  bool
	Marks    []string
	HasMarks bool
}

// LoadError is a file that cannot be read as a scenario: the file, the line
// when known, the key path when the problem is about one key.
type LoadError struct {
	File string
	Line int
	Key  string
	Msg  string
	err  error
}

func (e *LoadError) Error() string {
	return tomlx.Located(e.File, e.Line, 0, e.Key, e.Msg)
}

// Unwrap returns the cause (a config error, a TOML parse error), if any.
func (e *LoadError) Unwrap() error { return e.err }

// LoadErrors is several problems in one file, in file order.
type LoadErrors []*LoadError

func (l LoadErrors) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap returns the problems.
func (l LoadErrors) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// The keys a scenario file may hold.
var (
	topKeys      = []string{"name", "rules", "config", "programs", "host", "step", "fails_with", "owners"}
	configKeys   = []string{"engine", "floor", "bots", "harness"} // attune.toml's tables, under [config] in a scenario
	hostKeys     = []string{"reads", "tools", "floor", "read_answers"}
	hostToolKeys = []string{"effect", "result", "echo", "fail", "answers"}
	answerKeys   = []string{"result", "value", "fail"}
	hostFloor    = []string{"refuse_marks"}
	expectKeys   = []string{"status", "result", "error", "reason", "refused_by", "hidden", "diagnostics",
		"notes", "continue", "rounds", "core_calls", "host_reads", "floor", "revision", "state", "diverged", "verdict", "halt"}
	roundKeys     = []string{"tools", "output", "host_continue"}
	roundToolKeys = []string{"path", "args"}
	noteKeys      = []string{"kind", "text"}
	floorKeys     = []string{"args", "marks"}
	statuses      = []string{"ok", "refused", "failed"}
	refusers      = []string{"ceiling", "guard", "floor", "reentry", "retry-budget", "grant", "abi", "schema", "authority"}
)

// opKeys are the keys each op takes besides op and expect.
var opKeys = map[string][]string{
	"start":       {"instance", "bot", "kind", "session", "parent"},
	"restart":     {"instance"},
	"edit":        {"program", "source"},
	"forget":      {"program"},
	"attune":      {"instance"},
	"set-read":    {"key", "value"},
	"turn-begin":  {"instance", "input", "context_fresh", "harness"},
	"round-begin": {"instance", "harness"},
	"tool":        {"instance", "path", "args", "call_id", "harness"},
	"round-end":   {"instance", "host_continue", "output", "harness"},
	"turn-end":    {"instance", "addenda", "harness"},
	"turn":        {"instance", "input", "context_fresh", "rounds", "max_rounds"},
	"method":      {"instance", "owner", "method", "input", "call_id", "host_authority"},
	"command":     {"instance", "name", "text"},
	"spawn":       {"instance", "child", "bot", "kind"},
	"consume":     {"instance", "note"},
	"replay":      {"instance"},
	"hydrate":     {"instance"},
	"rollback":    {"instance", "to_turn"},
	"state":       {"instance", "owner"},
	"reset":       {"owner", "instance"},
}

// required are the keys an op cannot do without.
var required = map[string][]string{
	"edit":     {"program", "source"},
	"forget":   {"program"},
	"set-read": {"key"},
	"tool":     {"path"},
	"method":   {"owner", "method"},
	"command":  {"name"},
	"spawn":    {"child"},
	"consume":  {"note"},
	"rollback": {"to_turn"},
	"state":    {"owner"},
	"reset":    {"owner"},
}

// Ops lists the ops a step may name, sorted.
func Ops() []string {
	out := make([]string, 0, len(opKeys))
	for op := range opKeys {
		out = append(out, op)
	}
	sort.Strings(out)
	return out
}

// Load reads a scenario file. Every problem it finds is reported, as a
// *LoadError (one) or LoadErrors (several).
func Load(file string) (*Scenario, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &LoadError{File: file, Msg: "cannot read: " + err.Error(), err: err}
	}
	if len(data) > maxFileSize {
		return nil, &LoadError{File: file, Msg: fmt.Sprintf("larger than %d bytes", maxFileSize)}
	}
	return Parse(file, data)
}

// Parse reads a scenario from data; file names it in errors and its folder
// is the folder config.engine.packs resolve against.
func Parse(file string, data []byte) (sc *Scenario, err error) {
	l := &loader{file: file, text: newLines(data)}
	defer func() {
		if r := recover(); r != nil {
			sc, err = nil, &LoadError{File: file, Msg: fmt.Sprintf("cannot decode: %v", r)}
		}
	}()
	// The TOML parser's memory grows faster than the input with deep
	// nesting: hostile files are refused before it runs.
	if cerr := config.CheckSource(file, data); cerr != nil {
		var ce *config.Error
		if errors.As(cerr, &ce) {
			return nil, &LoadError{File: file, Line: ce.Line, Msg: ce.Msg, err: cerr}
		}
		return nil, &LoadError{File: file, Msg: cerr.Error(), err: cerr}
	}
	var top map[string]toml.Primitive
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&top)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &LoadError{File: file, Line: pe.Position.Line, Msg: pe.Message, err: err}
		}
		return nil, &LoadError{File: file, Msg: err.Error(), err: err}
	}
	l.md = &md
	sc = &Scenario{File: file}
	for _, k := range sortedKeys(top) {
		line := l.keyLine(top[k])
		if line == 0 {
			line = l.text.tableLine(k)
		}
		switch {
		case contains(topKeys, k):
		case contains(configKeys, k):
			l.errAt(line, k, "unknown key: a configuration key; in a scenario it goes under [config] (as [config.%s])", k)
		default:
			l.errAt(line, k, "unknown key%s", tomlx.Suggest(k, topKeys))
		}
	}
	if p, ok := top["name"]; ok {
		l.decode(p, "name", &sc.Name)
	}
	if sc.Name == "" {
		l.errAt(l.keyLine(top["name"]), "name", "a scenario needs a name")
	}
	if p, ok := top["rules"]; ok && l.decode(p, "rules", &sc.Rules) {
		for _, id := range sc.Rules {
			if !ruleID().MatchString(id) {
				l.errAt(l.keyLine(p), "rules", "%q is not a spec rule id (R3.4)", id)
			}
		}
	}
	if p, ok := top["fails_with"]; ok {
		l.decode(p, "fails_with", &sc.FailsWith)
	}
	dir := filepath.Dir(file)
	cfg, cerr := config.Decode(file, md, top["config"], "config", dir)
	if cerr != nil {
		for _, e := range config.Errors(cerr) {
			l.errs = append(l.errs, &LoadError{File: file, Line: e.Line, Key: e.Path, Msg: e.Msg, err: e})
		}
	} else {
		if !md.IsDefined("config", "engine", "store") {
			cfg.Engine.Store = "memory:"
		}
		sc.Config = cfg
	}
	if p, ok := top["programs"]; ok {
		sc.Programs = l.programs(p)
	}
	if p, ok := top["host"]; ok {
		l.host(p, &sc.Host)
	}
	if p, ok := top["owners"]; ok {
		sc.Owners = l.owners(p)
	}
	if p, ok := top["step"]; ok {
		sc.Steps = l.steps(p, cfg)
	}
	if len(sc.Steps) == 0 && len(l.errs) == 0 {
		l.errAt(0, "step", "a scenario needs at least one [[step]]")
	}
	switch len(l.errs) {
	case 0:
		return sc, nil
	case 1:
		return nil, l.errs[0]
	}
	sort.SliceStable(l.errs, func(i, j int) bool { return l.errs[i].Line < l.errs[j].Line })
	return nil, LoadErrors(l.errs)
}

// loader collects the problems of one file.
type loader struct {
	file string
	md   *toml.MetaData
	text *lines
	errs []*LoadError
}

func (l *loader) errAt(line int, key, format string, args ...any) {
	l.errs = append(l.errs, &LoadError{File: l.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// decode decodes a primitive into v, reporting a type error at key.
func (l *loader) decode(p toml.Primitive, key string, v any) bool {
	if err := l.md.PrimitiveDecode(p, v); err != nil {
		l.errAt(l.keyLine(p), key, "%s", typeMsg(err))
		return false
	}
	return true
}

func typeMsg(err error) string {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return pe.Message
	}
	msg := err.Error()
	if i := strings.Index(msg, "): "); i >= 0 && strings.HasPrefix(msg, "toml:") {
		msg = msg[i+3:]
	}
	return msg
}

// keyLine returns the line of the key holding p (outside arrays of tables,
// where key paths are unique), or 0.
func (l *loader) keyLine(p toml.Primitive) int { return tomlx.Line(l.md, p) }

func (l *loader) programs(p toml.Primitive) []Program {
	var m map[string]toml.Primitive
	if !l.decode(p, "programs", &m) {
		return nil
	}
	var out []Program
	for _, name := range sortedKeys(m) {
		key := "programs." + toml.Key{name}.String()
		var src string
		if !l.decode(m[name], key, &src) {
			continue
		}
		if msg := badFileName(name); msg != "" {
			l.errAt(l.keyLine(m[name]), key, "%s", msg)
			continue
		}
		out = append(out, Program{File: path.Clean(name), Source: src})
	}
	return out
}

// badFileName checks a scratch pack file name: relative, inside the pack.
func badFileName(name string) string {
	c := path.Clean(name)
	switch {
	case name == "":
		return "an empty file name"
	case path.IsAbs(name) || filepath.IsAbs(name) || strings.Contains(name, `\`):
		return "a file name must be relative to the scratch pack, with / between folders"
	case c == "." || c == ".." || strings.HasPrefix(c, "../"):
		return "a file name must stay inside the scratch pack"
	}
	return ""
}

func (l *loader) host(p toml.Primitive, h *Host) {
	var m map[string]toml.Primitive
	if !l.decode(p, "host", &m) {
		return
	}
	for _, k := range sortedKeys(m) {
		if !contains(hostKeys, k) {
			l.errAt(l.keyLine(m[k]), "host."+toml.Key{k}.String(), "unknown key%s", tomlx.Suggest(k, hostKeys))
		}
	}
	if rp, ok := m["reads"]; ok {
		var reads map[string]any
		if l.decode(rp, "host.reads", &reads) {
			h.Reads = plainMap(reads)
		}
	}
	if tp, ok := m["tools"]; ok {
		var tools map[string]toml.Primitive
		if l.decode(tp, "host.tools", &tools) {
			for _, path := range sortedKeys(tools) {
				if t, ok := l.hostTool(path, tools[path]); ok {
					h.Tools = append(h.Tools, t)
				}
			}
		}
	}
	if rp, ok := m["read_answers"]; ok {
		var ra map[string]toml.Primitive
		if l.decode(rp, "host.read_answers", &ra) {
			h.ReadAnswers = map[string][]Answer{}
			for _, k := range sortedKeys(ra) {
				h.ReadAnswers[k] = l.answers(ra[k], "host.read_answers."+toml.Key{k}.String(), "value")
			}
		}
	}
	if fp, ok := m["floor"]; ok {
		var f map[string]toml.Primitive
		if l.decode(fp, "host.floor", &f) {
			h.Floor = &Floor{RefuseMarks: []string{}}
			for _, k := range sortedKeys(f) {
				key := "host.floor." + toml.Key{k}.String()
				if k != "refuse_marks" {
					l.errAt(l.keyLine(f[k]), key, "unknown key%s", tomlx.Suggest(k, hostFloor))
					continue
				}
				l.decode(f[k], key, &h.Floor.RefuseMarks)
			}
		}
	}
}

func (l *loader) hostTool(toolPath string, p toml.Primitive) (HostTool, bool) {
	base := "host.tools." + toml.Key{toolPath}.String()
	t := HostTool{Path: toolPath}
	var m map[string]toml.Primitive
	if !l.decode(p, base, &m) {
		return t, false
	}
	ok := true
	for _, k := range sortedKeys(m) {
		key := base + "." + toml.Key{k}.String()
		switch k {
		case "effect":
			var v any
			if !l.decode(m[k], key, &v) {
				ok = false
				continue
			}
			effects, good := stringList(v)
			if !good {
				l.errAt(l.keyLine(m[k]), key, "want a list of effect names, got %s", tomlx.Describe(v))
				ok = false
			}
			t.Effects = effects
		case "result":
			var v any
			if l.decode(m[k], key, &v) {
				t.Result = plain(v)
			}
		case "echo":
			ok = l.decode(m[k], key, &t.Echo) && ok
		case "fail":
			t.HasFail = true
			ok = l.decode(m[k], key, &t.Fail) && ok
		case "answers":
			t.Answers, t.HasAnswers = l.answers(m[k], key, "result"), true
		default:
			l.errAt(l.keyLine(m[k]), key, "unknown key%s", tomlx.Suggest(k, hostToolKeys))
			ok = false
		}
	}
	n := 0
	for _, set := range []bool{hasKey(m, "result"), t.Echo, t.HasFail} {
		if set {
			n++
		}
	}
	if n > 1 {
		l.errAt(l.keyLine(p), base, "give one of result, echo = true and fail")
		ok = false
	}
	return t, ok
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// answers decodes a list of answers: {VALUE = x} (valueKey is result for
// tools, value for reads), {fail = "message"}, or {} (nil).
func (l *loader) answers(p toml.Primitive, key, valueKey string) []Answer {
	var raw []map[string]any
	if !l.decode(p, key, &raw) {
		return nil
	}
	out := make([]Answer, 0, len(raw))
	for i, m := range raw {
		var a Answer
		for _, k := range sortedKeys(m) {
			switch {
			case k == valueKey:
				a.Value = plain(m[k])
			case k == "fail":
				s, isStr := m[k].(string)
				if !isStr {
					l.errAt(l.keyLine(p), key, "answers[%d].fail: want the failure's message, got %s", i, tomlx.Describe(m[k]))
				}
				a.Fail, a.HasFail = s, true
			default:
				l.errAt(l.keyLine(p), key, "answers[%d]: unknown key %s (an answer is {%s = ...}, {fail = \"...\"} or {})", i, k, valueKey)
			}
		}
		if _, has := m[valueKey]; has && a.HasFail {
			l.errAt(l.keyLine(p), key, "answers[%d]: give %s or fail, not both", i, valueKey)
		}
		out = append(out, a)
	}
	return out
}

// owners decodes [owners."NAME@SCOPE"] tables.
func (l *loader) owners(p toml.Primitive) []OwnerSeed {
	var m map[string]toml.Primitive
	if !l.decode(p, "owners", &m) {
		return nil
	}
	var out []OwnerSeed
	for _, addr := range sortedKeys(m) {
		key := "owners." + toml.Key{addr}.String()
		if !strings.HasSuffix(addr, "@project") && !strings.HasSuffix(addr, "@global") {
			l.errAt(l.keyLine(m[addr]), key, "only project and global owners are seeded: name them NAME@project or NAME@global")
			continue
		}
		var t map[string]any
		if !l.decode(m[addr], key, &t) {
			continue
		}
		seed := OwnerSeed{Owner: addr}
		for _, k := range sortedKeys(t) {
			if k != "entries" {
				l.errAt(l.keyLine(m[addr]), key+"."+k, "unknown key%s (an owner seed takes entries)", tomlx.Suggest(k, []string{"entries"}))
				continue
			}
			list, ok := plain(t[k]).([]any)
			if !ok {
				l.errAt(l.keyLine(m[addr]), key+".entries", "want a list of log entries, got %s", tomlx.Describe(t[k]))
				continue
			}
			seed.Entries = list
		}
		out = append(out, seed)
	}
	return out
}

// steps decodes the [[step]] tables.
func (l *loader) steps(p toml.Primitive, cfg *config.Config) []*Step {
	var raw []map[string]any
	if !l.decode(p, "step", &raw) {
		return nil
	}
	headers := l.text.stepHeaders()
	var out []*Step
	lastInstance := "main"
	for i, m := range raw {
		s := &Step{Index: i + 1}
		if i < len(headers) {
			s.Line = headers[i]
		}
		sl := &stepLoader{l: l, s: s, m: m, line: s.Line}
		sl.load(cfg, &lastInstance)
		out = append(out, s)
	}
	return out
}

// stepLoader reads one step's table.
type stepLoader struct {
	l    *loader
	s    *Step
	m    map[string]any
	line int
}

// at returns the line of the step's key path (dotted inside the step).
func (sl *stepLoader) at(keyPath ...string) int {
	if ln := sl.l.text.stepKeyLine(sl.line, keyPath); ln > 0 {
		return ln
	}
	return sl.line
}

func (sl *stepLoader) key(keyPath ...string) string {
	return fmt.Sprintf("step[%d].%s", sl.s.Index, toml.Key(keyPath).String())
}

func (sl *stepLoader) errf(keyPath []string, format string, args ...any) {
	sl.l.errAt(sl.at(keyPath...), sl.key(keyPath...), format, args...)
}

func (sl *stepLoader) load(cfg *config.Config, lastInstance *string) {
	s, m := sl.s, sl.m
	opv, ok := m["op"]
	if !ok {
		sl.l.errAt(sl.line, fmt.Sprintf("step[%d]", s.Index), "a step needs an op (one of %s)", strings.Join(Ops(), ", "))
		return
	}
	op, isStr := opv.(string)
	keys, known := opKeys[op]
	if !isStr || !known {
		what := tomlx.Describe(opv)
		if str, ok := opv.(string); ok {
			what = strconv.Quote(str)
		}
		sl.errf([]string{"op"}, "unknown op %s%s", what, tomlx.Suggest(fmt.Sprint(opv), Ops()))
		return
	}
	s.Op = op
	for _, k := range sortedKeys(m) {
		if k == "op" || k == "expect" {
			continue
		}
		if !contains(keys, k) {
			sl.errf([]string{k}, "unknown key for op %s%s (it takes %s)", op, tomlx.Suggest(k, keys), strings.Join(keys, ", "))
		}
	}
	for _, k := range required[op] {
		if _, ok := m[k]; !ok {
			sl.l.errAt(sl.line, sl.key(k), "op %s needs %s", op, k)
		}
	}
	if contains(keys, "instance") {
		s.Instance = sl.str("instance")
		if s.Instance == "" {
			s.Instance = *lastInstance
			if op == "start" {
				s.Instance = "main"
			}
		}
		if op == "start" {
			*lastInstance = s.Instance
		}
	}
	s.Bot = sl.str("bot")
	if op == "start" && s.Bot == "" && cfg != nil && len(cfg.BotOrder) == 1 {
		s.Bot = cfg.BotOrder[0]
	}
	s.Kind = sl.str("kind")
	switch {
	case op == "start" && s.Kind != "" && !contains([]string{"foreground", "bot", "oneshot", "child"}, s.Kind):
		sl.errf([]string{"kind"}, "kind %q: want foreground, bot, oneshot or child", s.Kind)
	case op == "spawn" && s.Kind != "" && !contains([]string{"worker", "examiner"}, s.Kind):
		sl.errf([]string{"kind"}, "kind %q: want worker or examiner", s.Kind)
	}
	s.Session = sl.str("session")
	s.Parent = sl.str("parent")
	s.Program = sl.str("program")
	if s.Program != "" {
		if msg := badFileName(s.Program); msg != "" {
			sl.errf([]string{"program"}, "%s", msg)
		}
		s.Program = path.Clean(s.Program)
	}
	s.Source = sl.str("source")
	s.Key = sl.str("key")
	s.Value = plain(m["value"])
	s.Input = plain(m["input"])
	s.ContextFresh = sl.boolean("context_fresh")
	s.Path = sl.str("path")
	s.Args = plain(m["args"])
	s.CallID = sl.str("call_id")
	if h, ok := m["harness"]; ok {
		s.Harness = plain(h)
	}
	s.HostContinue = sl.boolean("host_continue")
	if _, ok := m["output"]; ok {
		o := sl.str("output")
		s.Output = &o
	}
	if v, ok := m["addenda"]; ok {
		list, good := stringList(v)
		if !good {
			sl.errf([]string{"addenda"}, "want a list of strings, got %s", tomlx.Describe(v))
		}
		s.Addenda = list
	}
	s.MaxRounds = 10
	if _, ok := m["max_rounds"]; ok {
		s.MaxRounds = sl.integer("max_rounds")
		if s.MaxRounds < 1 {
			sl.errf([]string{"max_rounds"}, "want at least 1, got %d", s.MaxRounds)
		}
	}
	if v, ok := m["rounds"]; ok {
		s.Rounds = sl.rounds(v)
	}
	s.Owner = sl.str("owner")
	s.Method = sl.str("method")
	s.HostAuthority = sl.boolean("host_authority")
	s.Name = sl.str("name")
	s.Text = sl.str("text")
	s.Child = sl.str("child")
	s.Note = sl.str("note")
	if _, ok := m["to_turn"]; ok {
		s.ToTurn = sl.integer("to_turn")
		if s.ToTurn < 0 {
			sl.errf([]string{"to_turn"}, "want a turn number >= 0, got %d", s.ToTurn)
		}
	}
	if v, ok := m["expect"]; ok {
		s.Expect = sl.expect(v)
	}
}

func (sl *stepLoader) str(k string) string {
	v, ok := sl.m[k]
	if !ok {
		return ""
	}
	s, isStr := v.(string)
	if !isStr {
		sl.errf([]string{k}, "want a string, got %s", tomlx.Describe(v))
	}
	return s
}

func (sl *stepLoader) boolean(k string) bool {
	v, ok := sl.m[k]
	if !ok {
		return false
	}
	b, isBool := v.(bool)
	if !isBool {
		sl.errf([]string{k}, "want true or false, got %s", tomlx.Describe(v))
	}
	return b
}

func (sl *stepLoader) integer(k string) int {
	n, ok := toInt(sl.m[k])
	if !ok {
		sl.errf([]string{k}, "want a whole number, got %s", tomlx.Describe(sl.m[k]))
	}
	return n
}

func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int64:
		return int(n), true
	case float64:
		if n == float64(int(n)) {
			return int(n), true
		}
	}
	return 0, false
}

func (sl *stepLoader) rounds(v any) []Round {
	list, ok := tableList(v)
	if !ok {
		sl.errf([]string{"rounds"}, "want a list of tables {tools, output, host_continue}, got %s", tomlx.Describe(v))
		return nil
	}
	var out []Round
	for i, rm := range list {
		at := []string{"rounds"}
		var r Round
		for _, k := range sortedKeys(rm) {
			if !contains(roundKeys, k) {
				sl.errf(at, "rounds[%d]: unknown key %s%s", i+1, k, tomlx.Suggest(k, roundKeys))
			}
		}
		if o, ok := rm["output"]; ok {
			s, isStr := o.(string)
			if !isStr {
				sl.errf(at, "rounds[%d].output: want a string, got %s", i+1, tomlx.Describe(o))
			}
			r.Output = &s
		}
		if hc, ok := rm["host_continue"]; ok {
			b, isBool := hc.(bool)
			if !isBool {
				sl.errf(at, "rounds[%d].host_continue: want true or false, got %s", i+1, tomlx.Describe(hc))
			}
			r.HostContinue = b
		}
		if tv, ok := rm["tools"]; ok {
			tools, good := tableList(tv)
			if !good {
				sl.errf(at, "rounds[%d].tools: want a list of tables {path, args}, got %s", i+1, tomlx.Describe(tv))
			}
			for j, tm := range tools {
				for _, k := range sortedKeys(tm) {
					if !contains(roundToolKeys, k) {
						sl.errf(at, "rounds[%d].tools[%d]: unknown key %s%s", i+1, j+1, k, tomlx.Suggest(k, roundToolKeys))
					}
				}
				p, isStr := tm["path"].(string)
				if !isStr || p == "" {
					sl.errf(at, "rounds[%d].tools[%d].path: want a tool path, got %s", i+1, j+1, tomlx.Describe(tm["path"]))
				}
				r.Tools = append(r.Tools, ToolCall{Path: p, Args: plain(tm["args"])})
			}
		}
		out = append(out, r)
	}
	return out
}

func (sl *stepLoader) expect(v any) *Expect {
	m, ok := v.(map[string]any)
	if !ok {
		sl.errf([]string{"expect"}, "want a table, got %s", tomlx.Describe(v))
		return nil
	}
	e := &Expect{}
	sl.s.ExpectLines = map[string]int{}
	for _, k := range sortedKeys(m) {
		at := []string{"expect", k}
		sl.s.ExpectLines[k] = sl.at(at...)
		val := m[k]
		switch k {
		case "status":
			s, isStr := val.(string)
			if !isStr || !contains(statuses, s) {
				sl.errf(at, "want ok, refused or failed, got %s", tomlx.Describe(val))
			}
			e.Status = s
		case "result":
			e.Result, e.HasResult = plain(val), true
		case "state":
			e.State, e.HasState = plain(val), true
			if !contains([]string{"method", "state", "reset"}, sl.s.Op) {
				sl.errf(at, "op %s names no owner; state is for method, state and reset steps", sl.s.Op)
			}
		case "error", "reason":
			texts, good := stringList(val)
			if !good {
				sl.errf(at, "want a string or a list of strings, got %s", tomlx.Describe(val))
			}
			if k == "error" {
				e.Error, e.HasError = texts, true
			} else {
				e.Reason, e.HasReason = texts, true
			}
		case "verdict":
			s, isStr := val.(string)
			if !isStr || !contains([]string{"allow", "ask", "none"}, s) {
				sl.errf(at, "want allow, ask or none, got %s", tomlx.Describe(val))
			}
			e.Verdict = &s
		case "halt":
			switch h := val.(type) {
			case bool:
				if h {
					empty := ""
					e.Halt = &empty
				} else {
					e.NoHalt = true
				}
			case string:
				e.Halt = &h
			default:
				sl.errf(at, "want true, false or a text the halt's reason contains, got %s", tomlx.Describe(val))
			}
		case "refused_by":
			s, isStr := val.(string)
			if !isStr || !contains(refusers, s) {
				sl.errf(at, "want one of %s, got %s", strings.Join(refusers, ", "), tomlx.Describe(val))
			}
			e.RefusedBy = &s
		case "hidden", "continue":
			b, isBool := val.(bool)
			if !isBool {
				sl.errf(at, "want true or false, got %s", tomlx.Describe(val))
			}
			if k == "hidden" {
				e.Hidden = &b
			} else {
				e.Continue = &b
			}
		case "rounds", "core_calls", "host_reads":
			n, isInt := toInt(val)
			if !isInt || n < 0 {
				sl.errf(at, "want a count, got %s", tomlx.Describe(val))
			}
			switch k {
			case "rounds":
				e.Rounds = &n
			case "core_calls":
				e.CoreCalls = &n
			default:
				e.HostReads = &n
			}
		case "revision":
			n, isInt := toInt(val)
			if !isInt || n < 0 {
				sl.errf(at, "want a revision (a whole number), got %s", tomlx.Describe(val))
			}
			r := int64(n)
			e.Revision = &r
			if !contains([]string{"method", "state", "reset"}, sl.s.Op) {
				sl.errf(at, "op %s names no owner; revision is for method, state and reset steps", sl.s.Op)
			}
		case "diagnostics":
			list, good := stringList(val)
			if !good {
				sl.errf(at, "want a list of strings, got %s", tomlx.Describe(val))
			}
			e.Diagnostics, e.HasDiags = list, true
		case "diverged":
			list, good := stringList(val)
			if !good {
				sl.errf(at, "want a list of strings, got %s", tomlx.Describe(val))
			}
			if sl.s.Op != "replay" {
				sl.errf(at, "op %s does not replay; diverged is for replay steps", sl.s.Op)
			}
			e.Diverged, e.HasDiverged = list, true
		case "notes":
			e.Notes, e.HasNotes = sl.notes(at, val), true
		case "floor":
			e.Floor = sl.floor(at, val)
		default:
			sl.errf(at, "unknown expectation%s (expect takes %s)", tomlx.Suggest(k, expectKeys), strings.Join(expectKeys, ", "))
		}
	}
	return e
}

func (sl *stepLoader) notes(at []string, v any) []NoteWant {
	list, ok := tableList(v)
	if !ok {
		sl.errf(at, "want a list of tables {kind, text}, got %s", tomlx.Describe(v))
		return nil
	}
	out := []NoteWant{}
	for i, nm := range list {
		var n NoteWant
		for _, k := range sortedKeys(nm) {
			s, isStr := nm[k].(string)
			switch {
			case !contains(noteKeys, k):
				sl.errf(at, "notes[%d]: unknown key %s%s", i+1, k, tomlx.Suggest(k, noteKeys))
			case !isStr:
				sl.errf(at, "notes[%d].%s: want a string, got %s", i+1, k, tomlx.Describe(nm[k]))
			case k == "kind":
				if s != "ambient" && s != "activating" {
					sl.errf(at, "notes[%d].kind: want ambient or activating, got %q", i+1, s)
				}
				n.Kind = s
			default:
				n.Text, n.HasText = s, true
			}
		}
		out = append(out, n)
	}
	return out
}

func (sl *stepLoader) floor(at []string, v any) *FloorWant {
	switch x := v.(type) {
	case bool:
		return &FloorWant{Ran: x}
	case map[string]any:
		f := &FloorWant{Ran: true}
		for _, k := range sortedKeys(x) {
			switch k {
			case "args":
				f.Args, f.HasArgs = plain(x[k]), true
			case "marks":
				list, ok := stringList(x[k])
				if !ok {
					sl.errf(at, "marks: want a list of strings, got %s", tomlx.Describe(x[k]))
				}
				f.Marks, f.HasMarks = list, true
			default:
				sl.errf(at, "unknown key %s%s", k, tomlx.Suggest(k, floorKeys))
			}
		}
		return f
	}
	sl.errf(at, "want false or {args, marks}, got %s", tomlx.Describe(v))
	return nil
}

// plain turns decoded TOML into plain data: numbers become float64 (the
// engine's numbers), arrays of tables become lists of maps, datetimes
// their TOML text.
func plain(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case int:
		return float64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainMap(e)
		}
		return out
	case map[string]any:
		return plainMap(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	return v
}

func plainMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = plain(v)
	}
	return out
}

// stringList reads a list of strings (a single string counts as one).
func stringList(v any) ([]string, bool) {
	switch x := v.(type) {
	case string:
		return []string{x}, true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	case []string:
		return x, true
	}
	return nil, false
}

// tableList reads a list of tables.
func tableList(v any) ([]map[string]any, bool) {
	switch x := v.(type) {
	case []map[string]any:
		return x, true
	case []any:
		out := make([]map[string]any, 0, len(x))
		for _, e := range x {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			out = append(out, m)
		}
		return out, true
	}
	return nil, false
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// sortedKeys returns the keys of m in sorted order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
