//go:build e2e

package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/attune-dev/attune/internal/peertest"
)

// hostNpm is npm's name of this platform (os-cpu).
func hostNpm() string {
	os, cpu := runtime.GOOS, runtime.GOARCH
	if os == "windows" {
		os = "win32"
	}
	if cpu == "amd64" {
		cpu = "x64"
	}
	return os + "-" + cpu
}

// scripts/release builds the host's binary with the version and commit it
// was given, SHA256SUMS holds its checksum, and the npm packages it fills
// install offline into a project where `npx attune version` runs that
// binary.
func TestReleaseHost(t *testing.T) {
	root := peertest.Root(t)
	dist := t.TempDir()
	cmd := exec.Command("bash", "scripts/release", "--host", "--version", "v0.7.1-test", "--out", dist)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release --host: %v\n%s", err, out)
	}
	commit, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	name := "attune-v0.7.1-test-" + runtime.GOOS + "-" + runtime.GOARCH + exe
	bin := filepath.Join(dist, name)
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	var info buildInfo
	if err := json.Unmarshal(out, &info); err != nil || info.Version != "v0.7.1-test" || info.Commit != strings.TrimSpace(string(commit)) {
		t.Errorf("the release binary says %s (%v), want version v0.7.1-test and commit %s", out, err, commit)
	}

	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(data)
	if want := hex.EncodeToString(h[:]) + "  " + name + "\n"; string(sums) != want {
		t.Errorf("SHA256SUMS = %q, want %q", sums, want)
	}

	t.Run("npm", func(t *testing.T) {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Fatal("npm is not on PATH: this test packs and installs the npm packages (install Node.js)")
		}
		packs, proj, cache := t.TempDir(), t.TempDir(), t.TempDir()
		npx, err := exec.LookPath("npx")
		if err != nil {
			t.Fatal("npx is not on PATH (it comes with npm)")
		}
		runNpm := func(dir string, args ...string) string {
			t.Helper()
			c := exec.Command(npm, args...)
			if args[0] == "npx" {
				c = exec.Command(npx, args[1:]...)
			}
			c.Dir = dir
			// no registry is reachable: everything comes from the packed files
			c.Env = append(os.Environ(), "npm_config_cache="+cache, "npm_config_registry=http://127.0.0.1:9/",
				"npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false")
			out, err := c.CombinedOutput()
			if err != nil {
				t.Fatalf("npm %v: %v\n%s", args, err, out)
			}
			return string(out)
		}
		runNpm(packs, "pack", filepath.Join(dist, "npm", "attune"), filepath.Join(dist, "npm", "@attune-dev", "attune-"+hostNpm()))
		main := filepath.Join(packs, "attune-0.7.1-test.tgz")
		plat := filepath.Join(packs, "attune-dev-attune-"+hostNpm()+"-0.7.1-test.tgz")
		for _, f := range []string{main, plat} {
			if _, err := os.Stat(f); err != nil {
				t.Fatalf("npm pack did not write %s: %v", f, err)
			}
		}
		if err := os.WriteFile(filepath.Join(proj, "package.json"), []byte(`{"name": "proj", "version": "1.0.0", "private": true}`), 0o644); err != nil {
			t.Fatal(err)
		}
		runNpm(proj, "install", "--offline", main, plat)
		out := runNpm(proj, "npx", "--offline", "attune", "version", "--json")
		var info buildInfo
		if err := json.Unmarshal([]byte(lastLine(out)), &info); err != nil || info.Version != "v0.7.1-test" || info.OS != runtime.GOOS {
			t.Errorf("npx attune version: %s (%v)", out, err)
		}
		// the exit code passes through the shim
		c := exec.Command(filepath.Join(proj, "node_modules", ".bin", "attune"), "init", "--harness", "vim")
		if out, err := c.CombinedOutput(); err == nil || c.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "unknown harness") {
			t.Errorf("attune init --harness vim through the shim: %v\n%s", err, out)
		}
	})
}

func lastLine(s string) string {
	var last string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			last = l
		}
	}
	return last
}
