package main

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
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

// Every platform scripts/release builds has an npm package whose os and
// cpu are that platform's, the shim knows its package, the main package
// lists it among its optionalDependencies, and the tree's packages build
// for it (no build constraint leaves a package empty there).
func TestReleasePlatforms(t *testing.T) {
	script, err := os.ReadFile("../../scripts/release")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^platforms="([^"]+)"`).FindSubmatch(script)
	if m == nil {
		t.Fatal(`scripts/release has no platforms="..." line`)
	}
	platforms := strings.Fields(string(m[1]))
	if len(platforms) != 6 {
		t.Errorf("scripts/release builds %v, want linux, darwin and windows on amd64 and arm64", platforms)
	}
	shim, err := os.ReadFile("../../npm/attune/bin/attune.js")
	if err != nil {
		t.Fatal(err)
	}
	var main struct {
		OptionalDependencies map[string]string `json:"optionalDependencies"`
		Bin                  map[string]string `json:"bin"`
	}
	readJSON(t, "../../npm/attune/package.json", &main)
	if main.Bin["attune"] != "bin/attune.js" || len(main.OptionalDependencies) != len(platforms) {
		t.Errorf("npm/attune/package.json: bin %v, %d optionalDependencies for %d platforms", main.Bin, len(main.OptionalDependencies), len(platforms))
	}
	for _, p := range platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		nos, cpu := map[string]string{"windows": "win32"}[goos], map[string]string{"amd64": "x64"}[goarch]
		if nos == "" {
			nos = goos
		}
		if cpu == "" {
			cpu = goarch
		}
		name := "@attune-dev/attune-" + nos + "-" + cpu
		var pkg struct {
			Name, Version string
			OS, CPU       []string
			Files         []string
		}
		readJSON(t, "../../npm/"+name+"/package.json", &pkg)
		exe := "bin/attune"
		if goos == "windows" {
			exe += ".exe"
		}
		if pkg.Name != name || pkg.Version != "0.0.0" || !slices.Equal(pkg.OS, []string{nos}) || !slices.Equal(pkg.CPU, []string{cpu}) || !slices.Equal(pkg.Files, []string{exe}) {
			t.Errorf("npm/%s/package.json: %+v", name, pkg)
		}
		if main.OptionalDependencies[name] != "0.0.0" {
			t.Errorf("npm/attune/package.json does not list %s at 0.0.0", name)
		}
		if !strings.Contains(string(shim), `'`+nos+` `+cpu+`': '`+name+`'`) {
			t.Errorf("the shim does not map %s %s to %s", nos, cpu, name)
		}
		cmd := exec.Command("go", "list", "-deps", "-e", "-f", "{{with .Error}}{{.}}{{end}}", ".")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("go list for %s: %v\n%s", p, err, out)
		}
	}
}
