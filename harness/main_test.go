package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/attune-dev/attune/internal/peertest"
)

// attuneBin is the attune binary the process tests exec, built once.
var attuneBin string

var attuneBuild peertest.Binary

func TestMain(m *testing.M) {
	bin, err := attuneBuild.Build()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building attune: %v\n", err)
		os.Exit(1)
	}
	attuneBin = bin
	code := m.Run()
	attuneBuild.Remove()
	os.Exit(code)
}

// runHook runs `attune hook claude --config cfg` on one event as a fresh
// process and returns its decoded answer.
func runHook(t *testing.T, cfg string, event any) map[string]any {
	t.Helper()
	in, _ := json.Marshal(event)
	cmd := exec.Command(attuneBin, "hook", "claude", "--config", cfg)
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Errorf("attune hook: %v\n%s", err, errOut.String())
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Errorf("answer %q: %v (stderr %s)", out.String(), err, errOut.String())
	}
	if errOut.Len() > 0 {
		t.Logf("stderr: %s", errOut.String())
	}
	return m
}
