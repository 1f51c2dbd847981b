package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/attune-dev/attune/config"
)

// Responder is the one way an event's input becomes the agent's answer,
// whatever carried it (a command hook's stdin, a POST to `hook serve`):
// the dialect reads it (Read), Answer decides under the event's time,
// and the dialect renders the decision. Input that is not an event is
// answered by BadEvent; a crash or an answer past Timeout is a Failure.
type Responder struct {
	Dialect Dialect
	// Answer decides one event read whole (Runtime.Handle, AnswerOnce).
	Answer func(context.Context, Event) Answer
	// Log hears what went wrong, each line starting with Who ("attune
	// hook claude").
	Log io.Writer
	Who string
	// Timeout is the event's time, for the message when it runs out (the
	// caller's ctx carries the deadline).
	Timeout time.Duration
	// Go runs Answer off the caller's goroutine, so that an answer past
	// its time is not waited for (nil: a goroutine started for the event;
	// a long-lived server passes Runtime.Go).
	Go func(func())
}

// Respond answers the input data; readErr says why it is not all there
// (it did not end in time, it is too large): then the answer is what its
// start names (BadEvent of Named).
func (r Responder) Respond(ctx context.Context, data []byte, readErr error) []byte {
	d := r.Dialect
	var ev Event
	err := readErr
	if err != nil {
		ev = Named(d, data)
	} else {
		ev, err = Read(d, data)
	}
	if err != nil {
		// not an event attune can act on: say so; deny a tool call it names
		fmt.Fprintf(r.Log, "%s: %v\n", r.Who, err)
		if errors.Is(err, ErrUnknownEvent) {
			fmt.Fprintf(r.Log, "%s: answered with no decision; update attune or remove the hook entry for this event\n", r.Who)
		}
		return d.Render(ev, BadEvent(ev, err))
	}
	return d.Render(ev, r.Decide(ctx, ev))
}

// Decide runs Answer on ev within ctx: a crash, or no answer when ctx is
// done, is a tool call nothing judged (Failure).
func (r Responder) Decide(ctx context.Context, ev Event) Answer {
	done := make(chan Answer, 1)
	run := r.Go
	if run == nil {
		run = func(f func()) { go f() }
	}
	run(func() {
		defer func() {
			if p := recover(); p != nil {
				err := fmt.Errorf("internal error: %v", p)
				fmt.Fprintf(r.Log, "%s: %s: %v\n", r.Who, ev.Name, err)
				done <- Failure(ev, err, false)
			}
		}()
		done <- r.Answer(ctx, ev)
	})
	select {
	case a := <-done:
		return a
	case <-ctx.Done():
		err := fmt.Errorf("no answer within %s (--timeout)", r.Timeout)
		fmt.Fprintf(r.Log, "%s: %s: %v\n", r.Who, ev.Name, err)
		return Failure(ev, err, false)
	}
}

// AnswerOnce answers one event in a process of its own (a command hook):
// it finds the configuration (FindConfig: cfgFlag, $ATTUNE_CONFIG,
// attune.toml in $CLAUDE_PROJECT_DIR or the working directory), answers
// quick when nothing can see the call (Quick), else hands it to the warm
// server for the configuration when one runs (Forward), else opens a
// Runtime, handles the event and closes it.
func AnswerOnce(ctx context.Context, d Dialect, ev Event, cfgFlag string, stderr io.Writer) Answer {
	if ev.Kind == Other { // nothing to decide: answer before opening anything
		return Answer{}
	}
	cwd, _ := os.Getwd()
	path, err := FindConfig(cfgFlag, os.Getenv, os.Getenv("CLAUDE_PROJECT_DIR"), cwd)
	var cfg *config.Config
	if err == nil {
		cfg, err = config.Load(path)
	}
	if err == nil {
		if a, ok := Quick(ctx, cfg, d, ev); ok { // nothing can see the call: no store
			return a
		}
		exe, _ := os.Executable()
		if a, ok := Forward(ctx, cfg, d, ev, exe, stderr); ok { // a warm server's (handoff.go)
			return a
		}
		var rt *Runtime
		rt, err = New(ctx, cfg, Options{Stderr: stderr})
		if err == nil {
			defer rt.Close()
			return rt.Handle(ctx, d, ev)
		}
	}
	fmt.Fprintf(stderr, "attune hook %s: %v\n", d.Name(), err)
	return Failure(ev, err, false)
}
