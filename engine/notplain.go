package engine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/attune-dev/attune/session"
)

// Host values with no JSON form (R3.10, R5.10). Everything the host hands
// the engine inside a turn is journaled: a core's result, a tool's
// arguments, an admit/read answer, a host library's result, a turn's input.
// The journal encodes each entry as it is added; an entry it cannot encode
// (a NaN or infinity, a cycle, a channel or function) it does not buffer,
// and says so (session.EncodeError). The engine then fails the one call
// that brought the value, with CodeNotPlain and a text that says which call,
// which value and where, and journals that failure in its place, so a
// replay sees what the caller saw and the session and its journal go on.
// Values the call needs before anything runs (a tool's arguments, a turn's
// input) are checked first, so nothing runs on a value the journal could
// not record; answers (a core's result, a delivery) are checked by the
// journal's own encoding when they are recorded.

// hostValueRule ends every not-plain message: what to do.
const hostValueRule = "host values must have a JSON form (nil, booleans, finite numbers, strings, and lists and maps of them; no NaN or infinities, cycles, channels or functions)"

// notPlainErr is the error of a host value with no JSON form: what names
// the call and the value ("tool fs/read: the core's result"), root the
// value's name in the key path ("result").
func notPlainErr(what, root string, ee *session.EncodeError) *Error {
	verb := " is"
	if strings.HasSuffix(what, "arguments") {
		verb = " are"
	}
	msg := "not-plain: " + what + verb + " not plain data: " + ee.What + " at key path " + ee.At(root) + "; " + hostValueRule
	return &Error{Code: CodeNotPlain, Message: msg, Err: ee}
}

// leftOut stands, in a replay, for a host value the session could not
// journal: the step it came with failed with the recorded error (the
// entry's NotPlain names the value), and the step fails the same way.
type leftOut string

// turnInputNotPlain checks the input of turn n before anything runs: nil
// when the journal can record it.
func turnInputNotPlain(v any, n int) *Error {
	if lo, ok := v.(leftOut); ok {
		return &Error{Code: CodeNotPlain, Message: string(lo)}
	}
	if err := session.Encodable(v); err != nil {
		return notPlainErr("turn "+strconv.Itoa(n)+": the input", "input", err.(*session.EncodeError))
	}
	return nil
}

// replayValue is the value a replay hands a step for the host value en
// recorded under field: the recorded one, or a leftOut standing for one
// that could not be recorded.
func replayValue(en session.Entry, field string, recorded any) any {
	if en.NotPlain == field {
		return leftOut(en.Error)
	}
	return recorded
}

// describe names the call and the value an entry's field holds, for a
// not-plain error: what and the root of its key path.
func describe(en *session.Entry, field string) (what, root string) {
	switch en.Type {
	case session.Core:
		return "tool " + en.Path + ": the core's result", "result"
	case session.Read:
		return "admit/read " + en.Key + ": the host's answer", "answer"
	case session.Floor:
		return "tool " + en.Path + ": the floor's verdict", "verdict"
	case session.Delivery:
		if en.Kind == DeliveryLib {
			return "host library call " + en.Key + ": the result", "result"
		}
		return en.Kind + " " + en.Key + ": the host's answer", "answer"
	case session.Tool, entryToolOpen:
		if field == "result" {
			return "tool " + en.Path + ": the result", "result"
		}
		return "tool " + en.Path + ": the arguments", "args"
	case session.TurnBegin:
		return fmt.Sprintf("turn %d: the input", en.Turn), "input"
	case session.Method:
		if field == "result" {
			return "method " + en.Owner + "." + en.Name + ": the result", "result"
		}
		return "method " + en.Owner + "." + en.Name + ": the input", "input"
	}
	return en.Type + " entry: the " + field, field
}

// journalFailed journals en, which the journal could not encode (err),
// without its host values and failed with their not-plain error, and
// returns that error for the caller to fail its step with.
func (s *sessionState) journalFailed(en session.Entry, err error) *Error {
	var ee *session.EncodeError
	if !errors.As(err, &ee) {
		ee = &session.EncodeError{What: err.Error(), Err: err}
	}
	what, root := describe(&en, ee.Field)
	ne := notPlainErr(what, root, ee)
	switch ee.Field { // leave out the value that has no JSON form
	case "input":
		en.Input = nil
	case "value":
		en.Value = nil
	case "result":
		en.Result = nil
	default:
		en.Input, en.Value, en.Result = nil, nil, nil
	}
	en.Error = ne.Message
	if en.NotPlain == "" && ee.Field == "value" {
		en.NotPlain = "value" // a host answer: a replay fails it as not-plain again
	}
	if en.Status == StatusOK {
		en.Status = StatusFailed
	}
	if s.j.Add(en) != nil { // another of its values has none either
		en.Input, en.Value, en.Result = nil, nil, nil
		_ = s.j.Add(en) // its other fields are the engine's own: they encode
	}
	return ne
}
