package harness

import (
	"testing"

	"github.com/attune-dev/attune/internal/peertest"
)

// attuneBin is the attune binary the process tests exec, built once.
var attuneBin string

var attuneBuild peertest.Binary

func TestMain(m *testing.M) { attuneBuild.Main(m, &attuneBin) }

// runHook runs `attune hook claude --config cfg` on one event as a fresh
// process and returns its decoded answer.
func runHook(t *testing.T, cfg string, event any) map[string]any {
	t.Helper()
	return peertest.Hook(t, attuneBin, cfg, event)
}
