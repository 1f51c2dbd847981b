package config

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/attune-dev/attune/internal/tomlx"
)

// Defaults of [harness.mcp].
const (
	DefaultMCPCallTimeout  = 30 * time.Second
	DefaultMCPStartTimeout = 60 * time.Second
	DefaultMCPMaxMessage   = 16 << 20 // bytes of one JSON-RPC message
	// DefaultMCPJournalDelay: a tools/call's journal entries wait this
	// long, so that the calls of those milliseconds share one store append.
	DefaultMCPJournalDelay = 10 * time.Millisecond
)

// MCP is the [harness.mcp] table of `attune mcp`, the policy proxy in front
// of MCP servers.
type MCP struct {
	// CallTimeout bounds every request the proxy forwards to an upstream
	// server, a tools/call included, except initialize.
	CallTimeout time.Duration
	// StartTimeout bounds an upstream's answer to initialize: a server
	// started by npx or a container may take a while to come up.
	StartTimeout time.Duration
	// MaxMessage bounds one JSON-RPC message from the client or an
	// upstream, in bytes (a huge tool result is refused with an error).
	MaxMessage int
	// JournalDelay is how long the journal entries of a tools/call, written
	// behind its answer, wait before they are written, so that the calls
	// made meanwhile share one store append (one SQLite transaction and
	// fsync); 0 writes them at once.
	JournalDelay time.Duration
	// Tools gives the effects of upstream tools, by tool path
	// (mcp/UPSTREAM/TOOL) or pattern (mcp/fs/*, mcp/**), in file order.
	// A tool no entry names has no effects.
	Tools []MCPTool
}

// MCPTool is one entry of [harness.mcp.tools].
type MCPTool struct {
	Pattern string
	Effects []string
}

// Effects returns the effects of the upstream tool at path: those of the
// entry naming path exactly, else of the longest pattern that matches it,
// else none.
func (m MCP) Effects(path string) []string {
	best := -1
	for i, t := range m.Tools {
		if t.Pattern == path {
			return t.Effects
		}
		if MatchPath(t.Pattern, path) && (best < 0 || len(t.Pattern) > len(m.Tools[best].Pattern)) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	return m.Tools[best].Effects
}

// MatchPath reports whether a tool path matches a pattern as guards and
// hooks match them: the exact path, PREFIX/* (one more segment),
// PREFIX/** (any deeper path), * (one segment) or ** (any path).
func MatchPath(pattern, path string) bool {
	switch {
	case pattern == "**":
		return true
	case pattern == "*":
		return !strings.Contains(path, "/")
	case strings.HasSuffix(pattern, "/**"):
		prefix := pattern[:len(pattern)-2]
		return len(path) > len(prefix) && strings.HasPrefix(path, prefix)
	case strings.HasSuffix(pattern, "/*"):
		prefix := pattern[:len(pattern)-1]
		return len(path) > len(prefix) && strings.HasPrefix(path, prefix) && !strings.Contains(path[len(prefix):], "/")
	}
	return pattern == path
}

// ToolSegment is an upstream's tool name as the last segment of its tool
// path, mcp/UPSTREAM/SEGMENT: the name with each '%', '/', backslash, '*', '?',
// control character (below 0x20, and 0x7f) and each '.' of a run of two or
// more dots written as %XX (two upper-case hex digits of the byte). A
// name cannot add a segment to its path (a/b, ../etc) nor write a pattern
// (*): mcp/fs/* is every tool of fs and no other, and the encoding is one
// to one (% itself is encoded). docs/mcp.md says the same.
func ToolSegment(name string) string {
	clean := true
	for k := 0; k < len(name); k++ {
		if segmentByte(name, k) {
			clean = false
			break
		}
	}
	if clean {
		return name
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(name)+8)
	for k := 0; k < len(name); k++ {
		if c := name[k]; segmentByte(name, k) {
			b = append(b, '%', hex[c>>4], hex[c&15])
		} else {
			b = append(b, c)
		}
	}
	return string(b)
}

// segmentByte reports whether ToolSegment encodes the byte name[k].
func segmentByte(name string, k int) bool {
	switch c := name[k]; {
	case c == '%', c == '/', c == '\\', c == '*', c == '?', c < 0x20, c == 0x7f:
		return true
	case c == '.':
		return k > 0 && name[k-1] == '.' || k+1 < len(name) && name[k+1] == '.'
	}
	return false
}

// mcpPathProblem checks an entry of [harness.mcp.tools] under mcp/: it
// names tools as their paths are written (ToolSegment), so a tool name's
// '/', '..', '?' or control character is written %XX, never as it is.
func mcpPathProblem(p string) string {
	rest, ok := strings.CutPrefix(p, "mcp/")
	if !ok || rest == "**" || rest == "*" {
		return ""
	}
	up, tool, found := strings.Cut(rest, "/")
	switch {
	case !found:
		return ""
	case up == "" || tool == "":
		return fmt.Sprintf("tool path %s: an MCP tool's path is mcp/UPSTREAM/TOOL", quote(p))
	case tool == "*" || tool == "**":
		return ""
	case strings.Contains(tool, "/"):
		return fmt.Sprintf("tool path %s: an MCP tool's path is mcp/UPSTREAM/TOOL, one segment after the upstream; a / in a tool's name is written %%2F (mcp/%s/%s)", quote(p), up, ToolSegment(tool))
	}
	for k := 0; k < len(tool); k++ {
		if c := tool[k]; c != '%' && segmentByte(tool, k) {
			return fmt.Sprintf("tool path %s: a tool name's %q is written %%%02X in its path (docs/mcp.md, tool paths)", quote(p), string(c), c)
		}
	}
	return ""
}

// patternProblem checks a tool path or pattern: a * may only end it, as
// /* or /**, or be the whole pattern.
func patternProblem(p string) string {
	if p == "" {
		return "want a tool path or pattern, got an empty key"
	}
	if i := strings.IndexByte(p, '*'); i >= 0 {
		rest := p[i:]
		if (rest != "*" && rest != "**") || (i > 0 && p[i-1] != '/') {
			return fmt.Sprintf("pattern %s: a * may only end a pattern, as /* or /**", quote(p))
		}
	}
	return ""
}

var mcpKeys = []string{"call_timeout", "start_timeout", "max_message", "journal_delay", "tools"}

func (d *decoder) mcp(cfg *Config, mp path, v any) {
	t, ok := d.table(mp, v)
	if !ok {
		return
	}
	m := &cfg.MCP
	for _, k := range sortedKeys(t) {
		p, v := mp.key(k), t[k]
		d.line(p)
		switch k {
		case "call_timeout":
			if dur, ok := d.duration(p, v, "30s", 0); ok {
				m.CallTimeout = dur
			}
		case "start_timeout":
			if dur, ok := d.duration(p, v, "30s", 0); ok {
				m.StartTimeout = dur
			}
		case "journal_delay":
			s, ok := v.(string)
			dur, err := time.ParseDuration(s)
			switch {
			case !ok || err != nil:
				d.errorf(p, `want a duration like "10ms" (or "0s": at once), got %s`, tomlx.Describe(v))
			case dur < 0 || dur > 10*time.Second:
				d.errorf(p, `want a duration between "0s" and "10s", got %s`, quote(s))
			default:
				m.JournalDelay = dur
			}
		case "max_message":
			n, ok := v.(int64)
			switch {
			case !ok:
				d.errorf(p, "want a number of bytes > 0, got %s", tomlx.Describe(v))
			case n <= 0 || n > 1<<30:
				d.errorf(p, "want a number of bytes between 1 and 1073741824, got %d", n)
			default:
				m.MaxMessage = int(n)
			}
		case "tools":
			tt, ok := d.table(p, v)
			if !ok {
				break
			}
			for _, pat := range d.keysInOrder(p, tt) {
				pp := p.key(pat)
				d.line(pp)
				if problem := cmp.Or(patternProblem(pat), mcpPathProblem(pat)); problem != "" {
					d.errorf(pp, "%s", problem)
					continue
				}
				m.Tools = append(m.Tools, MCPTool{Pattern: pat, Effects: d.names(pp, tt[pat], "effect", notEmpty, nil)})
			}
		default:
			d.unknown(p, mcpKeys)
		}
	}
}

// duration reads a positive duration like example ("30s"), at most max
// when max > 0. Every duration key says the same thing for the same mistake.
func (d *decoder) duration(p path, v any, example string, max time.Duration) (time.Duration, bool) {
	s, ok := v.(string)
	if !ok {
		d.errorf(p, `want a duration like %s, got %s`, quote(example), tomlx.Describe(v))
		return 0, false
	}
	dur, err := time.ParseDuration(s)
	switch {
	case err != nil:
		d.errorf(p, `want a duration like %s, got %s`, quote(example), quote(s))
	case dur <= 0:
		d.errorf(p, `want a duration > 0, got %s`, quote(s))
	case max > 0 && dur > max:
		d.errorf(p, `want a duration of at most %s, got %s`, max, quote(s))
	default:
		return dur, true
	}
	return 0, false
}

// keysInOrder returns the keys of the table at p in the order the file
// writes them.
func (d *decoder) keysInOrder(p path, t map[string]any) []string {
	full := append(d.root[:len(d.root):len(d.root)], p.keys()...)
	seen := map[string]bool{}
	var out []string
	for _, k := range d.md.Keys() {
		if len(k) == len(full)+1 && equalKeys(k[:len(full)], full) {
			if _, ok := t[k[len(full)]]; ok && !seen[k[len(full)]] {
				seen[k[len(full)]] = true
				out = append(out, k[len(full)])
			}
		}
	}
	for _, k := range sortedKeys(t) {
		if !seen[k] {
			out = append(out, k)
		}
	}
	return out
}

func equalKeys(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
