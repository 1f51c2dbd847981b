package harness

import (
	"context"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/hostreads"
)

// HostReads is engine.Options.Read of an engine attune hosts itself (`attune
// hook`, `hook serve`, `attune mcp`): admit/read answered from
// [harness.reads] (package hostreads), git and exec in the working folder
// cwd names for the calling instance ("" or a nil cwd: the
// configuration's folder).
func HostReads(cfg *config.Config, cwd func(instance string) string) func(ctx context.Context, key string) (any, error) {
	reads := hostreads.New(cfg.Reads, cfg.Dir)
	return func(ctx context.Context, key string) (any, error) {
		c, _ := engine.ReadCallOf(ctx)
		dir := ""
		if cwd != nil {
			dir = cwd(c.Instance)
		}
		return reads.Read(ctx, key, c.Arg, c.HasArg, dir)
	}
}
