package main

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// `attune version` and `attune --version` print the version, the commit,
// the Go version and the platform; --json prints them as one object.
func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, errOut := run(args...)
		if code != 0 || !strings.HasPrefix(out, "attune ") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		for _, want := range []string{"commit", runtime.Version(), runtime.GOOS + "/" + runtime.GOARCH} {
			if !strings.Contains(out, want) {
				t.Errorf("%v does not print %q:\n%s", args, want, out)
			}
		}
	}
	code, out, _ := run("version", "--json")
	var info buildInfo
	if err := json.Unmarshal([]byte(out), &info); code != 0 || err != nil || info.Version == "" || info.Go != runtime.Version() || info.OS != runtime.GOOS || info.Arch != runtime.GOARCH {
		t.Errorf("version --json: exit %d, %v: %s", code, err, out)
	}
	if code, _, _ := run("version", "extra"); code != 2 {
		t.Errorf("version extra: exit %d", code)
	}
}

// The version comes from the build information, and the release's linker
// values win over it; a build without VCS stamps says the commit is unknown.
func TestVersionFromBuildInfo(t *testing.T) {
	checkout := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/attune-dev/attune", Version: "(devel)"}}
	info := readBuildInfo(checkout, "", "")
	if info.Version != "(devel)" || info.Commit != "" || !strings.Contains(info.text(), "commit   unknown") {
		t.Errorf("a checkout without VCS stamps: %+v\n%s", info, info.text())
	}
	stamped := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}}
	info = readBuildInfo(stamped, "", "")
	if info.Version != "v1.2.3" || info.Commit != "abc123" || !info.Modified || info.Go != "go1.26.0" || !strings.Contains(info.text(), "abc123 (with uncommitted changes)") {
		t.Errorf("go install at a version: %+v\n%s", info, info.text())
	}
	info = readBuildInfo(checkout, "v0.9.0", "def456")
	if info.Version != "v0.9.0" || info.Commit != "def456" || info.Modified {
		t.Errorf("a release build: %+v", info)
	}
	for _, v := range []string{"v0.0.0-20260102030405-abcdef123456", "v1.2.4-0.20260102030405-abcdef123456", "v1.3.0-rc.1.0.20260102030405-abcdef123456"} {
		pseudo := &debug.BuildInfo{Main: debug.Module{Version: v}}
		if info := readBuildInfo(pseudo, "", ""); info.Version != v || info.Commit != "abcdef123456" {
			t.Errorf("go install at a commit (%s): %+v", v, info)
		}
	}
	if info := readBuildInfo(nil, "", ""); info.Version != "(devel)" || info.Go != runtime.Version() {
		t.Errorf("no build information: %+v", info)
	}
}
