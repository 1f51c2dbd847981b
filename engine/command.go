package engine

// Pack commands (/NAME TEXT): a command file is loaded from the pinned blob
// into its own registry the first time it is invoked, and runs in the
// callback ambient; its notes and journal entry are those of a command.

import (
	"context"
	"fmt"
	"sort"
	"strings"

	lua "github.com/attune-dev/attune/internal/lua"

	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/session"
)

// CommandResult is what running a pack command returns.
type CommandResult struct {
	Status Status
	Error  string
	Notes  []Note
	// Err is the error behind a failure (nil when ok), an *Error.
	Err error
}

// Command runs pack command NAME (/NAME TEXT): its file is loaded from the
// pinned blob into the instance's registry set when first invoked.
func (i *Instance) Command(ctx context.Context, name, text string) CommandResult {
	res := i.command(ctx, name, text, "")
	if res.Status != StatusOK {
		res.Err = settled(res.Status, res.Err, "", "", res.Error)
	}
	return res
}

// command runs a pack command under callID (empty: a fresh one; a replay
// gives the recorded one).
func (i *Instance) command(ctx context.Context, name, text, callID string) CommandResult {
	set, err := i.live()
	if err != nil {
		return CommandResult{Status: StatusFailed, Error: err.Error(), Err: err}
	}
	defer set.release()
	r, err := set.command(ctx, name)
	if err != nil {
		return CommandResult{Status: StatusFailed, Error: err.Error(), Err: wrapErr(CodeProgram, err, "")}
	}
	if callID == "" {
		callID = i.newCallID()
	}
	first := i.firstRevs(ctx, set)
	d := r.commandDecl()
	fr := newFrame(nil, ctx, i, r, d, callID)
	sink := &noteSink{phase: "command"}
	fr.notes = sink
	err = r.call(fr, luabind.Callback, r.command, 0, fr.ctxTable(), lua.LString(text))
	ss := i.sess.Load()
	ss.emit(sink.notes, callID)
	en := session.Entry{Type: session.Command, Name: name, Input: text, CallID: callID, Status: StatusOK, Revs: first}
	if err != nil {
		en.Status, en.Error, en.Code = StatusFailed, errText(err), string(scriptErr(r, err).Code)
	}
	ss.journal(en) // also outside a turn, for recordings; flushed with the next boundary then
	ferr := ss.flush(ctx)
	if err != nil {
		return CommandResult{Status: StatusFailed, Error: errText(err), Notes: sink.notes, Err: scriptErr(r, err)}
	}
	if ferr != nil {
		return CommandResult{Status: StatusFailed, Error: ferr.Error(), Notes: sink.notes, Err: wrapErr(CodeStore, ferr, "")}
	}
	return CommandResult{Status: StatusOK, Notes: sink.notes}
}

// command returns the registry of pack command NAME, loading it from the
// pinned blob the first time it is invoked.
func (s *regSet) command(ctx context.Context, name string) (*registry, error) {
	s.cmdMu.Lock()
	defer s.cmdMu.Unlock()
	if r, ok := s.commands[name]; ok {
		return r, nil
	}
	c, ok := s.pin.Command(name)
	if !ok {
		var names []string
		for _, c := range s.pin.Commands {
			names = append(names, c.Name)
		}
		sort.Strings(names)
		if len(names) == 0 {
			return nil, fmt.Errorf("no command /%s: the pinned packs have no commands", name)
		}
		return nil, fmt.Errorf("no command /%s in the pinned packs (have: %s)", name, strings.Join(names, ", "))
	}
	r, err := s.engine.loadRegistry(ctx, s, "commands/"+c.Name, c.File, c.SHA256, map[string]any{})
	if err != nil {
		return nil, err
	}
	if r.command == nil {
		r.close()
		return nil, fmt.Errorf("command file %s declares no define/command", c.File)
	}
	s.engine.liveStates.Add(1)
	s.commands[name] = r
	return r, nil
}

func fDefineCommand(s *luabind.State) int {
	r := regOf(s)
	r.command = s.CheckFunction("define/command", 1)
	r.cmdPos = r.position()
	return 0
}
