package hook

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/attune-dev/attune/harness"
)

// CommandOptions are one command hook's: `attune hook DIALECT`.
type CommandOptions struct {
	// Config is --config ("": FindConfig's search).
	Config string
	// Timeout is the most the event may take, reading it and waiting for
	// the session included (harness.DefaultTimeout).
	Timeout time.Duration
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
}

// Command answers the one event on o.Stdin on o.Stdout, through the
// harness's answer path (harness.Responder, harness.AnswerOnce). It never
// fails: what went wrong is said on o.Stderr and answered safely.
func Command(d harness.Dialect, o CommandOptions) {
	if o.Timeout <= 0 {
		o.Timeout = harness.DefaultTimeout
	}
	// the timeout runs from the start: an event that does not arrive whole
	// in time is answered as what its start names (a tool call: deny)
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	data, err := harness.ReadInput(ctx, o.Stdin)
	r := harness.Responder{Dialect: d, Log: o.Stderr, Who: "attune hook " + d.Name(), Timeout: o.Timeout,
		Answer: func(ctx context.Context, ev harness.Event) harness.Answer {
			return harness.AnswerOnce(ctx, d, ev, o.Config, o.Stderr)
		}}
	o.Stdout.Write(r.Respond(ctx, data, err))
	fmt.Fprintln(o.Stdout)
}
