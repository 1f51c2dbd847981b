package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/mcpproxy"
)

const mcpUsage = `usage: attune mcp [--config FILE] [--bot NAME] [--name NAME] [--upstream NAME=CMD ...] [-- UPSTREAM_COMMAND [ARGS...]]

An MCP server over stdio that runs the upstream MCP server(s) and relays
them, with every tools/call going through the bot's tool chain at the path
mcp/NAME/TOOL. --name names the upstream given after -- (default upstream);
--upstream adds one more (CMD is split at spaces; quote with ' or ").
The config defaults to ./attune.toml when it exists; [harness.mcp] sets
call_timeout, max_message and the tools' effects.`

// mcpCmd runs `attune mcp`: the client speaks on stdin/stdout.
func mcpCmd(args []string, stdout, stderr io.Writer) int {
	if stdout != io.Writer(os.Stdout) {
		return runMCP(args, os.Stdin, stdout, stderr)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(mcpProcs)
	}
	in, out, restore := pollableStdio()
	defer restore()
	return runMCP(args, in, out, stderr)
}

// mcpProcs is how many threads run the proxy's Go code at once unless the
// GOMAXPROCS environment variable says otherwise. A tools/call passes
// through the proxy as a chain of hand-offs between its goroutines (the
// client's reader, the request's worker, the upstream's reader), each
// waiting for the one before. With more than one, every hand-off also
// wakes an idle thread to look for work, which finds none and sleeps
// again: two thread switches per hand-off, on the call's path, on a
// machine where the client and the server want the cores. With one, the
// goroutine handed to runs next on the same thread. The paired benchmark
// (docs/mcp.md) measured 40-60 µs less per call and a quarter less CPU.
const mcpProcs = 1

func runMCP(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var (
		file, bot string
		name      = mcpproxy.DefaultName
		ups       []mcpproxy.Upstream
		explicit  bool
	)
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			if len(args) > 1 {
				ups = append([]mcpproxy.Upstream{{Name: name, Command: args[1:]}}, ups...)
			}
			args = nil
			break
		}
		flagName, val, hasVal := strings.Cut(a, "=")
		switch flagName {
		case "-h", "--help":
			fmt.Fprintln(stderr, mcpUsage)
			return 0
		case "--config", "--bot", "--name", "--upstream":
		default:
			fmt.Fprintf(stderr, "attune mcp: unknown argument %q (the upstream's command goes after --)\n%s\n", a, mcpUsage)
			return 2
		}
		if !hasVal {
			if len(args) < 2 {
				fmt.Fprintf(stderr, "attune mcp: %s wants a value\n", flagName)
				return 2
			}
			val, args = args[1], args[1:]
		}
		args = args[1:]
		switch flagName {
		case "--config":
			file, explicit = val, true
		case "--bot":
			bot = val
		case "--name":
			name = val
		case "--upstream":
			n, cmd, ok := strings.Cut(val, "=")
			words, err := splitCommand(cmd)
			if !ok || n == "" || err != nil || len(words) == 0 {
				fmt.Fprintf(stderr, "attune mcp: --upstream %q: want NAME=COMMAND [ARGS]%s\n", val, causeSuffix(err))
				return 2
			}
			ups = append(ups, mcpproxy.Upstream{Name: n, Command: words})
		}
	}
	if len(ups) == 0 {
		fmt.Fprintf(stderr, "attune mcp: no upstream server: give its command after --, or --upstream NAME=CMD\n%s\n", mcpUsage)
		return 2
	}
	if file == "" {
		file = config.DefaultFile
	}
	var cfg *config.Config
	var err error
	if _, statErr := os.Stat(file); !explicit && errors.Is(statErr, fs.ErrNotExist) {
		cfg = config.Default(".")
	} else if cfg, err = config.Load(file); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := mcpproxy.Serve(ctx, mcpproxy.Options{
		Config: cfg, Bot: bot, Upstreams: ups,
		In: stdin, Out: stdout, Stderr: stderr,
	}); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

func causeSuffix(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}

// splitCommand splits a command line at spaces; '...' and "..." quote.
func splitCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
