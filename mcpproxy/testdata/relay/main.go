// Command relay is the floor BenchmarkToolCallPaired measures beside the
// proxy: a process between the client and the upstream that copies bytes
// both ways and does nothing else, so that what any relaying process costs
// (two more pipe hops, two more wake-ups per call) is measured apart from
// what the proxy does on top of it.
//
//	relay UPSTREAM_COMMAND [ARGS...]
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: relay UPSTREAM_COMMAND [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	go func() {
		_, _ = io.Copy(in, os.Stdin)
		_ = in.Close() // the client closed its side: so does the upstream's input
	}()
	_, _ = io.Copy(os.Stdout, out)
	_ = cmd.Wait()
}
