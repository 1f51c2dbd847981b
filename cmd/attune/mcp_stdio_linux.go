package main

import (
	"io"

	"github.com/attune-dev/attune/mcpproxy"
)

// outputWriter writes the client's side, a descriptor in non-blocking
// mode, without the runtime's poller: a socket the poller watches is
// reported writable each time the client reads a message, which woke the
// proxy for nothing once per answer (mcpproxy.FDWriter).
func outputWriter(fd int) (io.WriteCloser, bool) { return mcpproxy.NewFDWriter(fd), true }
