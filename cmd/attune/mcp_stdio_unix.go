//go:build unix

package main

import (
	"io"
	"os"
	"syscall"
)

// pollableStdio returns the process's standard input and output as files
// the Go runtime's poller waits on, when they are pipes or sockets (as an
// MCP client's connection is): a copy of each descriptor in non-blocking
// mode. A read that waits on a blocking pipe holds a thread in the kernel,
// and its end wakes the runtime's monitor, which then runs every 20 µs
// while the process works (mcpproxy reads and writes these files with raw
// system calls, which do not wake it). The output is written without the
// poller where the platform allows (outputWriter). A terminal or a file is
// left as it is (non-blocking mode is shared with every process using the
// descriptor). restore puts back blocking mode and closes the copies.
func pollableStdio() (in *os.File, out io.Writer, restore func()) {
	var undo []func()
	open := func(f *os.File, std int, output bool) io.Writer {
		var st syscall.Stat_t // std, not f.Fd(): Fd would put a pollable f into blocking mode
		if err := syscall.Fstat(std, &st); err != nil {
			return f
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFIFO && st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
			return f
		}
		fd, err := syscall.Dup(std)
		if err != nil {
			return f
		}
		syscall.CloseOnExec(fd)
		if err := syscall.SetNonblock(fd, true); err != nil {
			_ = syscall.Close(fd)
			return f
		}
		if output {
			if w, ok := outputWriter(fd); ok {
				undo = append(undo, func() {
					_ = syscall.SetNonblock(fd, false)
					_ = w.Close()
				})
				return w
			}
		}
		p := os.NewFile(uintptr(fd), f.Name())
		undo = append(undo, func() {
			if rc, err := p.SyscallConn(); err == nil {
				_ = rc.Control(func(fd uintptr) { _ = syscall.SetNonblock(int(fd), false) })
			}
			_ = p.Close()
		})
		return p
	}
	in = open(os.Stdin, syscall.Stdin, false).(*os.File)
	out = open(os.Stdout, syscall.Stdout, true)
	return in, out, func() {
		for _, u := range undo {
			u()
		}
	}
}
