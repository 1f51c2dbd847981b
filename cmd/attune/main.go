// Command attune is the reference host of the attune behavior engine
// (R9.2). Each subcommand lives in its own file:
//
//	attune run    a demo session of the exemplar behaviors
//	attune test   run scenario files (docs/scenarios.md)
//	attune record a scenario that replays a stored session
//	attune check  check a configuration and its programs
//	attune lower  print the Lua a Scheme-style program lowers to
//	attune serve  the engine as a JSON-RPC 2.0 service over stdio
//	attune hook   the hook runtime of coding agents (Claude Code, Codex, Cursor, Gemini CLI)
//	attune mcp    a policy proxy in front of MCP servers
//	attune init   a starter project: attune.toml, a pack, a scenario
//	attune version the version, commit, Go version and platform
//	attune inspect a local page of the store's sessions (or their JSON)
//	attune explain why a hook event or recorded call gets its answer
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// command is one subcommand: it gets its arguments and the standard
// streams, and returns the exit code.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{
	"run":     {"a demo session of the exemplar behaviors on the embedded store", runCmd},
	"test":    {"run scenario files: attune test PATH...", testCmd},
	"check":   {"check a configuration and its programs: attune check [--store] [FILE]", checkCmd},
	"lower":   {"print the Lua a Scheme-style program lowers to: attune lower FILE.scm", lowerCmd},
	"serve":   {"the engine as a JSON-RPC 2.0 service over stdio", serveCmd},
	"record":  {"a scenario that replays a stored session: attune record SESSION [--config FILE] [--out FILE.toml]", recordCmd},
	"hook":    {"answer a coding agent's hook event: attune hook claude|codex|cursor|gemini [--config FILE]; attune hook install|uninstall|serve claude; attune hook doctor [--project DIR]", hookCmd},
	"mcp":     {"an MCP server guarding upstream MCP servers' tools: attune mcp -- CMD", mcpCmd},
	"init":    {"start a project: attune init [DIR] [--harness claude|codex|gemini|copilot] [--pack NAME]", initCmd},
	"store":   {"create or upgrade the store's schema: attune store migrate [--store URL] [--config FILE]", storeCmd},
	"version": {"print the version, commit, Go version and platform: attune version [--json]", versionCmd},
	"inspect": {"a local page of the store's sessions and their timelines: attune inspect [--json] [--listen 127.0.0.1:PORT] [SESSION]", inspectCmd},
	"explain": {"why a hook event or recorded call gets its answer, step by step: attune explain claude < event.json; attune explain --session ID --call CALL_ID", explainCmd},
}

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		return versionCmd(args[1:], stdout, stderr)
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "attune: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("usage: attune COMMAND [ARGS]\n\ncommands:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-7s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, b.String())
}

// parseFlags parses a command's flags. Asking for help (-h, --help) is not
// a usage error: the usage has been printed and the command exits 0; any
// other parse error exits 2. ok is false when the command should stop.
// parseInterleaved parses args with fs where the command's positional
// arguments may stand before, between and after its flags (attune record
// SESSION --out F, attune test --run X tests/): it returns them in order.
func parseInterleaved(fs *flag.FlagSet, args []string) (positional []string, code int, ok bool) {
	for rest := args; ; {
		if code, ok := parseFlags(fs, rest); !ok {
			return nil, code, false
		}
		if fs.NArg() == 0 {
			return positional, 0, true
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
}

func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		return 0, false
	default:
		return 2, false
	}
}
