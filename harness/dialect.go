package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Dialect is one agent's hook dialect. What dialects have in common is
// data: the names of its events and what each means (kinds), the name of
// its tool-call event (pre), the answers it can carry (caps), how its
// tools are named and what they do (tools, mcp, effects), whether it gives
// a tool call an id (callID). Only reading its input (parse) and writing
// its answer (render) are functions of its own. claude.go, codex.go,
// gemini.go, copilot.go and cursor.go are the tables.
type Dialect struct {
	// name is the [harness.NAME] table and the instance id prefix.
	name string
	// kinds are the events the dialect knows, by the name the agent
	// spells; looked up in order (Copilot CLI knows Claude Code's
	// spelling too).
	kinds []map[string]Kind
	// pre is the name of its tool-call event: the event Strict answers.
	pre  string
	caps Caps
	// tools is attune's path of a built-in tool NAME: tools/NAME; with
	// mcp, mcp__SERVER__TOOL is mcp/SERVER/TOOL. toolPath, when set,
	// names the tools instead.
	tools    string
	mcp      bool
	toolPath func(tool string) string
	// effects are the built-in tools of each effect, for a tool the
	// configuration does not name ([harness.NAME.tools]).
	effects map[string][]string
	// callID is the prefix of the ids made for the calls of an agent that
	// gives a tool call none ("": it gives one): a call's events are
	// matched by the tool and its arguments.
	callID string
	// fields: records carry the event's own fields as the agent sent them
	// (else the fields attune read, Event.fields).
	fields bool
	parse  func(d Dialect, data []byte) (Event, error)
	render func(ev Event, a Answer) []byte
}

// Name is the dialect's name: the [harness.NAME] table and the instance
// id prefix.
func (d Dialect) Name() string { return d.name }

// Caps are the answers the agent can carry beyond allow and deny.
func (d Dialect) Caps() Caps { return d.caps }

// Parse reads one event from the agent's JSON.
func (d Dialect) Parse(data []byte) (Event, error) {
	ev, err := d.parse(d, data)
	if d.fields && err == nil {
		ev.Fields = EventFields(data)
	}
	return ev, err
}

// Render writes the answer to ev in the agent's JSON.
func (d Dialect) Render(ev Event, a Answer) []byte { return d.render(ev, a) }

// ToolPath is attune's path of the agent's tool name.
func (d Dialect) ToolPath(tool string) string {
	if d.mcp {
		if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
			if server, name, ok := strings.Cut(rest, "__"); ok {
				return "mcp/" + server + "/" + name
			}
		}
	}
	if d.toolPath != nil {
		return d.toolPath(tool)
	}
	return d.tools + "/" + tool
}

// Effects are a tool's effects when the configuration does not name them.
func (d Dialect) Effects(tool string) []string {
	for effect, tools := range d.effects {
		if slices.Contains(tools, tool) {
			return []string{effect}
		}
	}
	return nil
}

// kind is what the event the agent calls name means, and whether the
// dialect knows it.
func (d Dialect) kind(name string) (Kind, bool) {
	for _, m := range d.kinds {
		if k, ok := m[name]; ok {
			return k, true
		}
	}
	return Other, false
}

// known is the kind of event name, or ErrUnknownEvent (ErrBadEvent when
// the input named none).
func (d Dialect) known(name, field string) (Kind, error) {
	if name == "" {
		return Other, fmt.Errorf("%w: no %s", ErrBadEvent, field)
	}
	k, ok := d.kind(name)
	if !ok {
		return Other, fmt.Errorf("%w %q", ErrUnknownEvent, name)
	}
	return k, nil
}

// bad is the event of input that did not decode (err), as far as its name
// (decoded before the error, when it was) tells.
func (d Dialect) bad(name string, err error) (Event, error) {
	k, _ := d.kind(name)
	return Event{Kind: k, Name: name}, fmt.Errorf("%w: %v", ErrBadEvent, err)
}

// withCallID gives a tool event of an agent that names no call an id of
// its tool and arguments (and scope, what else tells the call: Cursor's
// generation).
func (d Dialect) withCallID(ev *Event, scope string) {
	if d.callID == "" || ev.ToolUseID != "" {
		return
	}
	if ev.Kind == ToolPre || ev.Kind == ToolPost || ev.Kind == ToolFail {
		ev.ToolUseID = d.callID + ":" + scope + ev.Tool + ":" + string(marshal(ev.ToolInput))
	}
}

// noSession is the error of an event that names no session, in the
// dialect's field, for an event attune acts on.
func noSession(ev Event, field string) error {
	if ev.Session == "" && ev.Kind != Other {
		return fmt.Errorf("%w: no %s", ErrBadEvent, field)
	}
	return nil
}

// ErrUnknownEvent: the event's name is none the dialect knows.
var ErrUnknownEvent = errors.New("unknown hook event")

// ErrBadEvent: the input is not a hook event (not JSON, or a field of the
// wrong type).
var ErrBadEvent = errors.New("not a hook event")

// Dialects returns the dialect of an agent by name.
func Dialects(name string) (Dialect, bool) {
	switch name {
	case "claude":
		return Claude(), true
	case "codex":
		return Codex(), true
	case "copilot":
		return Copilot(), true
	case "cursor":
		return Cursor(), true
	case "gemini":
		return Gemini(), true
	}
	return Dialect{}, false
}

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("{}")
	}
	return b
}

// toolError is the failure an event's error field reports: its text, or
// its JSON when it is not a string; a failure event with none still says
// the tool failed.
func toolError(e any, kind Kind) string {
	var s string
	switch e := e.(type) {
	case nil:
	case string:
		s = e
	default:
		s = string(marshal(e))
	}
	if kind == ToolFail && s == "" {
		s = "the tool failed"
	}
	return s
}
