package engine

import "context"

// Harness is the agent harness a step comes from (a coding agent's hook
// event): its name ("claude") and the event's own fields, except the tool
// input and response (already the call's args and outcome). Every call and
// boundary record of a step run under WithHarness carries it as harness =
// {name = NAME, event = {...}}; it is journaled with the step, and a replay
// gives the records what the session's did. A call's record carries the
// event that began the call (under a harness, its PreToolUse) from its
// guards to its :post hooks.
type Harness struct {
	Name  string
	Event map[string]any
}

type harnessKey struct{}

// WithHarness returns ctx for steps that come from harness h.
func WithHarness(ctx context.Context, h Harness) context.Context {
	return context.WithValue(ctx, harnessKey{}, harnessPlain(h))
}

func harnessPlain(h Harness) map[string]any {
	ev := h.Event
	if ev == nil {
		ev = map[string]any{}
	}
	return map[string]any{"name": h.Name, "event": CopyPlain(ev)}
}

// WithHarnessData returns ctx for steps that come from a harness whose
// data v ({name, event}, plain) a journal recorded (a replay, a recorded
// scenario); nil: none.
func WithHarnessData(ctx context.Context, v any) context.Context { return withHarnessValue(ctx, v) }

// withHarnessValue returns ctx carrying harness data v as journaled (nil:
// none).
func withHarnessValue(ctx context.Context, v any) context.Context {
	if v == nil {
		return ctx
	}
	return context.WithValue(ctx, harnessKey{}, v)
}

// harnessOf is the harness data of ctx as plain data (nil: none).
func harnessOf(ctx context.Context) any {
	if ctx == nil {
		return nil
	}
	if v, ok := ctx.Value(harnessKey{}).(map[string]any); ok {
		return v
	}
	if v := ctx.Value(harnessKey{}); v != nil {
		return v
	}
	return nil
}
