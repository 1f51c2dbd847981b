package config

import (
	"strings"
	"testing"
)

// R4.2: a tool's name is one segment of its path, whatever it holds; the
// encoding is one to one and leaves usual names alone.
func TestToolSegment(t *testing.T) {
	for name, want := range map[string]string{
		"read_file": "read_file", "a/b": "a%2Fb", "../etc": "%2E%2E%2Fetc", "a..b": "a%2E%2Eb", "a.b": "a.b",
		"*": "%2A", "**": "%2A%2A", "q?": "q%3F", "x\x01\x7f": "x%01%7F", "50%": "50%25", `c:\x`: "c:%5Cx", "é": "é",
	} {
		got := ToolSegment(name)
		if got != want {
			t.Errorf("ToolSegment(%q) = %q, want %q", name, got, want)
		}
		if !MatchPath("mcp/fs/*", "mcp/fs/"+got) || MatchPath("mcp/fs/a/*", "mcp/fs/"+got) {
			t.Errorf("%q: its path leaves mcp/fs/*", name)
		}
	}
	if ToolSegment("a%2Fb") == ToolSegment("a/b") {
		t.Error("two names share a path")
	}
}

// An entry of [harness.mcp.tools] names a tool by its encoded path: a raw
// / or .. in the tool's segment is refused with the path to write.
func TestMCPToolEntriesEncoded(t *testing.T) {
	for entry, want := range map[string]string{
		`"mcp/fs/a/b"`:    "mcp/fs/a%2Fb",
		`"mcp/fs/../etc"`: "mcp/fs/%2E%2E%2Fetc",
		`"mcp/fs/x..y"`:   "written %2E",
		`"mcp/fs/q?"`:     "written %3F",
		`"mcp/fs/sub/**"`: "one segment after the upstream",
	} {
		_, err := Parse("attune.toml", []byte("[harness.mcp.tools]\n"+entry+" = [\"read\"]\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", entry, err, want)
		}
	}
	for _, entry := range []string{`"mcp/fs/a%2Fb"`, `"mcp/fs/*"`, `"mcp/**"`, `"mcp/fs/**"`, `"mcp/fs/read_file"`, `"**"`} {
		if _, err := Parse("attune.toml", []byte("[harness.mcp.tools]\n"+entry+" = [\"read\"]\n")); err != nil {
			t.Errorf("%s: %v", entry, err)
		}
	}
}
