package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"
	"sync"
)

// These are set only by the linker, at release (scripts/release):
//
//	go build -ldflags "-X main.releaseVersion=v0.3.0 -X main.releaseCommit=$(git rev-parse HEAD)"
//
// Nothing assigns them at run time. A build without them reports what Go's
// build information holds: the module version ("(devel)" for a build from a
// checkout, vX.Y.Z for `go install ...@vX.Y.Z`) and the VCS revision, which
// Go stamps unless the build says -buildvcs=false.
var (
	releaseVersion string
	releaseCommit  string
)

// pseudoVersion matches a Go pseudo-version (v0.0.0-20260102030405-abcdef123456
// and its variants); its last part is the commit's first 12 hex digits.
var pseudoVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[.-]\d{14}-([0-9a-f]{12})(\+incompatible)?$`) })

// buildInfo is what `attune version` reports.
type buildInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`             // "" when unknown
	Modified bool   `json:"modified,omitempty"` // the work tree had changes at build time
	Time     string `json:"time,omitempty"`     // the commit's time, when Go stamped it
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

// readBuildInfo gathers the version from the linker's values and Go's
// build information (bi may be nil: a binary built without module support).
func readBuildInfo(bi *debug.BuildInfo, version, commit string) buildInfo {
	info := buildInfo{Version: "(devel)", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi != nil {
		if v := bi.Main.Version; v != "" {
			info.Version = v
		}
		if bi.GoVersion != "" {
			info.Go = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = s.Value
			case "vcs.time":
				info.Time = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	if version != "" {
		info.Version = version
	}
	if m := pseudoVersion().FindStringSubmatch(info.Version); m != nil && info.Commit == "" {
		info.Commit = m[1] // go install ...@COMMIT: the module version names it (12 digits)
	}
	if commit != "" && commit != info.Commit {
		info.Commit, info.Time, info.Modified = commit, "", false
	}
	return info
}

func (b buildInfo) text() string {
	commit := b.Commit
	switch {
	case commit == "":
		commit = "unknown (built without VCS information: -buildvcs=false, or not from a git checkout)"
	case b.Modified:
		commit += " (with uncommitted changes)"
	}
	s := fmt.Sprintf("attune %s\n  commit   %s\n", b.Version, commit)
	if b.Time != "" {
		s += fmt.Sprintf("  date     %s\n", b.Time)
	}
	return s + fmt.Sprintf("  go       %s\n  os/arch  %s/%s\n", b.Go, b.OS, b.Arch)
}

// versionCmd is `attune version [--json]` (also `attune --version`).
func versionCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("attune version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: attune version [--json]")
		fs.PrintDefaults()
	}
	asJSON := fs.Bool("json", false, "print the version as one JSON object")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "attune version: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	bi, _ := debug.ReadBuildInfo()
	info := readBuildInfo(bi, releaseVersion, releaseCommit)
	if *asJSON {
		data, _ := json.Marshal(info)
		fmt.Fprintf(stdout, "%s\n", data)
		return 0
	}
	fmt.Fprint(stdout, info.text())
	return 0
}
