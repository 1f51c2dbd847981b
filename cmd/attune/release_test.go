package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// scripts/release refuses what it cannot release before it builds
// anything: an unknown argument, a version npm cannot carry. (The build
// itself, for the host platform, is TestReleaseHost under -tags e2e: a
// -trimpath build of the whole tree takes minutes on a cold cache.)
func TestReleaseScriptRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "unknown argument --bogus"},
		{[]string{"--version", "1.2"}, "--version 1.2: want vMAJOR.MINOR.PATCH"},
	} {
		cmd := exec.Command("bash", append([]string{"../../scripts/release", "--out", t.TempDir()}, c.args...)...)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("release %v: %v\n%s", c.args, err, out)
		}
	}
}

// The release stamps the variables `attune version` reads: the -X names in
// scripts/release are version.go's.
func TestReleaseLdflagsNames(t *testing.T) {
	script, err := os.ReadFile("../../scripts/release")
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile(`-X main\.(\w+)=`).FindAllStringSubmatch(string(script), -1)
	if len(names) != 2 {
		t.Fatalf("scripts/release sets %d variables with -X, want 2 (version and commit)", len(names))
	}
	src, err := os.ReadFile("version.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range names {
		if !regexp.MustCompile(`(?m)^\s+` + m[1] + `\s+string$`).Match(src) {
			t.Errorf("scripts/release sets main.%s, which version.go does not declare", m[1])
		}
	}
}
