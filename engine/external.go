package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/attune-dev/attune/session"
)

// A tool call whose core runs outside the process: a harness (a coding
// agent's hook runtime) asks attune before it runs a tool and tells it the
// outcome afterwards, often from another process. ToolBegin runs the chain
// up to the core (ceiling, guards, marks, floor, :pre) and stops there;
// ToolEnd completes the same call (its call id, its lineage and marks) with
// the harness's outcome and runs :post or :post-fail. The open call is kept
// in the session's journal, so another process that brings the instance back
// can complete it.
//
// A guard's invoke cannot wait for a core that runs after the process has
// answered: in this mode it returns an outcome with status "pending" (no
// result, no diagnostics). A guard that returns it (or anything but refuse
// or retry) lets the call through; a guard that refuses after invoke
// withholds the call, so the core never runs. :post and :post-fail hooks see
// the real outcome when ToolEnd delivers it.

// entryToolOpen is the journal entry of a call ToolBegin left open: Key is
// the harness's key of the call, Input the arguments as the harness gave
// them, Value the arguments and marks that reached the core.
const entryToolOpen = "tool-open"

// ErrNoOpenCall: ToolEnd found no open call under that key (it then ran
// the outcome as a call of its own).
var ErrNoOpenCall = errors.New("no open tool call under that key")

// Opened is what ToolBegin returns.
type Opened struct {
	// Outcome: status pending when the harness may run the core; otherwise
	// the call's final outcome (refused or failed; :post-fail ran).
	Outcome
	// Args are the arguments that reached the core, after every guard's
	// rewrite (nil unless pending).
	Args any
	// Marks are the marks the call carried at the floor.
	Marks []string
}

// external is the core of a call the harness runs (ToolBegin, a
// coreStep of the chain): it stops the chain at the core, keeping what
// reached it.
type external struct {
	args  any
	marks []string
}

func (x *external) runCore(c *chain, args any) Outcome {
	x.args = CopyPlain(args)
	x.marks = append([]string(nil), c.marks...)
	return Outcome{Status: StatusPending}
}

// harnessCore is the core of a call the harness ran (ToolEnd, a coreStep
// of the chain): its outcome is the harness's, result or failure.
type harnessCore struct {
	result  any
	failure string
	err     error // the failure's error, when the engine knows more than its text
}

func (h *harnessCore) runCore(_ *chain, _ any) Outcome {
	if h.failure == "" {
		return Outcome{Status: StatusOK, Result: h.result}
	}
	return Outcome{Status: StatusFailed, Error: h.failure, Err: h.err}
}

// openValue is the value of a tool-open entry, {"args": ..., "marks":
// [...]} (marks left out when none), as plain data: the journal encodes it
// itself, where a struct would go through encoding/json.
func openValue(args any, marks []string) map[string]any {
	v := map[string]any{"args": args}
	if len(marks) > 0 {
		ms := make([]any, len(marks))
		for k, m := range marks {
			ms[k] = m
		}
		v["marks"] = ms
	}
	return v
}

// ToolBegin runs c through the chain up to its core and leaves the call
// open under key (the harness's id of the call, unique in the session).
// The call is journaled whether or not a turn is open.
func (i *Instance) ToolBegin(ctx context.Context, c ToolCall, key string) Opened {
	op := i.toolBegin(ctx, c, key)
	op.settle()
	return op
}

func (i *Instance) toolBegin(ctx context.Context, c ToolCall, key string) Opened {
	set, err := i.live()
	if err != nil {
		return Opened{Outcome: Outcome{Status: StatusFailed, Error: err.Error()}}
	}
	defer set.release()
	te, refusal := i.lookupTool(set, c.Path)
	if te == nil {
		return Opened{Outcome: refusal}
	}
	if err := session.Encodable(c.Args); err != nil { // R3.10: the journal could not record the call
		if c.CallID == "" {
			c.CallID = i.newCallID()
		}
		out := i.argsNotPlain(i.sess.Load(), c.Path, c.CallID, err, true)
		_ = i.sess.Load().flush(ctx)
		return Opened{Outcome: out}
	}
	x := &external{}
	out := i.runChain(ctx, set, te, c, nil, x)
	ss := i.sess.Load()
	if out.Status == StatusPending {
		ss.journal(session.Entry{Type: entryToolOpen, Key: key, Path: c.Path, CallID: out.CallID, Input: c.Args,
			Value: openValue(x.args, x.marks), Harness: harnessOf(ctx), Guards: out.guards.list()})
	} else {
		en := journalTool(c.Path, c.Args, out)
		en.Harness = harnessOf(ctx)
		ss.journal(en)
	}
	if err := ss.flush(ctx); err != nil {
		return Opened{Outcome: Outcome{Status: StatusFailed, Error: err.Error(), CallID: out.CallID}}
	}
	out.Halt = ss.takeHalt()
	if out.Status != StatusPending {
		return Opened{Outcome: out}
	}
	return Opened{Outcome: out, Args: x.args, Marks: x.marks}
}

// ToolEnd completes the call ToolBegin left open under key with the
// harness's outcome: result when failure is "", else the failure's text.
// :post hooks run on success (their diagnostics are in the outcome),
// :post-fail hooks on failure. When no call is open under key (the harness
// never asked before running it), c is completed as a call of its own and
// the error wraps ErrNoOpenCall; the outcome is valid either way.
func (i *Instance) ToolEnd(ctx context.Context, c ToolCall, key string, result any, failure string) (Outcome, error) {
	out, err := i.toolEnd(ctx, c, key, result, failure)
	out.settle()
	return out, err
}

func (i *Instance) toolEnd(ctx context.Context, c ToolCall, key string, result any, failure string) (Outcome, error) {
	set, err := i.live()
	if err != nil {
		return Outcome{Status: StatusFailed, Error: err.Error()}, err
	}
	defer set.release()
	ss := i.sess.Load()
	open, err := findOpen(ctx, ss, key)
	if err != nil {
		return Outcome{Status: StatusFailed, Error: err.Error()}, err
	}
	var missing error
	raw, args, marks, callID := c.Args, c.Args, []string(nil), c.CallID
	if open != nil {
		c.Path, raw, callID = open.Path, open.Input, open.CallID
		if v, ok := open.Value.(map[string]any); ok {
			args = v["args"]
			if ms, ok := v["marks"].([]any); ok {
				for _, m := range ms {
					if s, ok := m.(string); ok {
						marks = append(marks, s)
					}
				}
			}
		}
	} else {
		missing = fmt.Errorf("tool %s: %w %q", c.Path, ErrNoOpenCall, key)
		if callID == "" {
			callID = i.newCallID()
		}
	}
	te := set.toolTable().m[c.Path]
	if te == nil {
		err := errors.New("no tool named " + c.Path + " (neither a host tool nor a define/tool of this pin)")
		return Outcome{Status: StatusFailed, Error: err.Error(), CallID: callID}, err
	}
	harness := harnessOf(ctx) // the event that began the call, when it was begun
	if open != nil {
		harness = open.Harness
	}
	if open == nil {
		if err := session.Encodable(c.Args); err != nil { // R3.10: the journal could not record the call
			out := i.argsNotPlain(ss, c.Path, callID, err, true)
			if ferr := ss.flush(ctx); ferr != nil {
				return Outcome{Status: StatusFailed, Error: ferr.Error(), CallID: callID}, ferr
			}
			return out, missing
		}
	}
	hc := &harnessCore{result: result, failure: failure}
	if failure == "" {
		if err := session.Encodable(result); err != nil {
			// a result the journal could not record: the call failed with that
			ne := notPlainErr("tool "+c.Path+": the result", "result", err.(*session.EncodeError))
			hc.result, hc.failure, hc.err = nil, ne.Message, ne
		}
	}
	core := session.Entry{Type: session.Core, Path: c.Path, Value: hc.result, Error: hc.failure}
	// the same chain as ToolBegin's, entered at its core step with the
	// harness's outcome as the core's: result guards judge a result here,
	// then :post, or :post-fail (with the lineage and marks it began with)
	ch := i.enterChain(ctx, set, te, callID, nil, hc)
	defer chains.Put(ch)
	ch.attempt, ch.floorSaw, ch.floorArgs, ch.harness = 1, true, args, harness
	ch.marks = append(ch.marks, marks...)
	out := ch.resume(args)
	out.CallID = callID
	out.Halt = ss.takeHalt()
	ss.journal(core)
	en := journalTool(c.Path, raw, out)
	en.Harness = harness
	ss.journal(en)
	if err := ss.flush(ctx); err != nil {
		return Outcome{Status: StatusFailed, Error: err.Error(), CallID: callID}, err
	}
	return out, missing
}

// findOpen returns the last call left open under key, nil when none is.
func findOpen(ctx context.Context, ss *sessionState, key string) (*session.Entry, error) {
	if key == "" {
		return nil, nil
	}
	f, err := ss.current(ctx) // the journal's fold: sessionsnapshot.go
	if err != nil {
		return nil, err
	}
	return f.lastOpen(key)
}
