package inspect

import (
	"context"
	"errors"
	"strings"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/harness"
)

// ReplayOn replays every instance of the timeline's session against its
// pin, on a scratch copy of st (nothing is written to st), with cfg's
// packs, and says where the replay first differed from the journal. trace,
// when set, hears every step of every chain the replay runs.
func ReplayOn(ctx context.Context, cfg *config.Config, st engine.Store, t *Timeline, trace engine.Tracer) (*Replay, error) {
	eng, err := engine.New(ctx, engine.Options{Config: cfg, Store: engine.ScratchStore(st), Trace: trace})
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	RegisterAgentTools(eng, cfg, t)
	out := &Replay{Instances: []ReplayedInstance{}}
	for _, in := range t.Instances {
		ri := ReplayedInstance{ID: in.ID, Diverged: []string{}}
		inst, err := eng.Restart(ctx, in.ID)
		if err == nil {
			var res engine.ReplayResult
			if res, err = inst.Replay(ctx); err == nil {
				ri.Steps = res.Steps
				for _, d := range res.Diverged {
					ri.Diverged = append(ri.Diverged, d.String())
				}
			}
		}
		if err != nil {
			ri.Error = err.Error()
		}
		if out.FirstDivergence == "" {
			switch {
			case len(ri.Diverged) > 0:
				out.FirstDivergence = in.ID + ": " + ri.Diverged[0]
			case ri.Error != "":
				out.FirstDivergence = in.ID + ": the replay could not run: " + ri.Error
			}
		}
		out.Instances = append(out.Instances, ri)
	}
	return out, nil
}

// RegisterAgentTools registers the tools of a hook session's calls
// (claude/Bash...) as attune hook does, with the effects its harness gives
// them, so that a replay finds them; a replay answers their cores from the
// journal.
func RegisterAgentTools(eng *engine.Engine, cfg *config.Config, t *Timeline) {
	done := map[string]bool{}
	for _, ev := range t.Events {
		if ev.Kind != KindCall || done[ev.Path] {
			continue
		}
		done[ev.Path] = true
		name, tool, ok := strings.Cut(ev.Path, "/")
		d, known := harness.Dialects(name)
		if !ok || !known || d.ToolPath(tool) != ev.Path {
			continue
		}
		effects, ok := cfg.Hook(d.Name()).Tools[tool]
		if !ok {
			effects = d.Effects(tool)
		}
		eng.RegisterTool(engine.HostTool{Path: ev.Path, Effects: effects, Core: func(context.Context, engine.CoreCall) (any, error) {
			return nil, errors.New("this tool runs in the agent")
		}})
	}
}
