package mcpproxy

import (
	"io"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a non-blocking pipe or socket with raw system
// calls, waiting in the runtime's poller when it would block. os.File's
// Read and Write tell the runtime that each call may block
// (syscall.Syscall), and the first such call after the process was idle
// wakes the runtime's monitor thread, which then runs every 20 µs for as
// long as any goroutine runs: several thread switches per tools/call, a
// sixth of the proxy's CPU. A read or write of a non-blocking descriptor
// never blocks, so a raw call (syscall.RawSyscall) is enough.
//
// Read and Write each serve one caller at a time (the connection's
// reader; wire.Writer, which holds a lock around each write): the system
// call each hands the poller is a function made once, with its state in
// the struct, where a closure per call cost an allocation for it and for
// what it captured, four per call.
type rawIO struct {
	f  *os.File
	rc syscall.RawConn

	rp     []byte // the read's buffer, n and error
	rn     int
	rerrno syscall.Errno
	readFn func(fd uintptr) bool

	wp      []byte // the write's bytes, how many are written, and error
	wn      int
	werrno  syscall.Errno
	writeFn func(fd uintptr) bool
}

// newRawIO wraps f when it is in non-blocking mode (the runtime's poller
// waits on it); ok is false otherwise, and f should be used as it is.
func newRawIO(f *os.File) (*rawIO, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, false
	}
	nonblocking := false
	if cerr := rc.Control(func(fd uintptr) {
		fl, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblocking = e == 0 && fl&syscall.O_NONBLOCK != 0
	}); cerr != nil || !nonblocking {
		return nil, false
	}
	r := &rawIO{f: f, rc: rc}
	r.readFn, r.writeFn = r.read, r.write
	return r, true
}

func (r *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.rp, r.rn, r.rerrno = p, 0, 0
	err := r.rc.Read(r.readFn)
	n, errno := r.rn, r.rerrno
	r.rp = nil
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: r.f.Name(), Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// read is the read system call Read hands the poller.
func (r *rawIO) read(fd uintptr) bool {
	p := r.rp
	for {
		m, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if e == syscall.EINTR {
			continue
		}
		r.rn, r.rerrno = int(m), e
		return e != syscall.EAGAIN
	}
}

// write is the write system calls Write hands the poller.
func (r *rawIO) write(fd uintptr) bool {
	p := r.wp
	for r.wn < len(p) {
		m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[r.wn])), uintptr(len(p)-r.wn))
		switch e {
		case 0:
			r.wn += int(m)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			r.werrno = e
			return true
		}
	}
	return true
}

func (r *rawIO) Write(p []byte) (int, error) {
	r.wp, r.wn, r.werrno = p, 0, 0
	err := r.rc.Write(r.writeFn)
	written, errno := r.wn, r.werrno
	r.wp = nil
	switch {
	case err != nil:
		return written, err
	case errno != 0:
		return written, &os.PathError{Op: "write", Path: r.f.Name(), Err: errno}
	case written < len(p):
		return written, io.ErrShortWrite
	}
	return written, nil
}

func (r *rawIO) Close() error { return r.f.Close() }

// rawReader is r as a rawIO when it is a non-blocking *os.File.
func rawReader(r io.Reader) io.Reader {
	if f, ok := r.(*os.File); ok {
		if x, ok := newRawIO(f); ok {
			return x
		}
	}
	return r
}

// rawWriter is w as a rawIO when it is a non-blocking *os.File.
func rawWriter(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok {
		if x, ok := newRawIO(f); ok {
			return x
		}
	}
	return w
}

// FDWriter writes to a descriptor in non-blocking mode that the runtime's
// poller does not watch, with raw system calls; when the descriptor is
// full it waits in ppoll(2), as a system call that may block. It is for
// the client's side of `attune mcp` when that is a socket (Node's child
// processes get socket pairs): a socket the poller watches is reported
// writable again each time the peer reads what was written to it, and each
// report woke the proxy's thread for nothing, once per message sent.
type FDWriter struct {
	fd int
}

// NewFDWriter writes to fd, which must be in non-blocking mode and not be
// watched by the runtime's poller (not an *os.File's descriptor); Close
// closes it.
func NewFDWriter(fd int) *FDWriter { return &FDWriter{fd: fd} }

func (w *FDWriter) Write(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(w.fd), uintptr(unsafe.Pointer(&p[written])), uintptr(len(p)-written))
		switch e {
		case 0:
			written += int(m)
		case syscall.EINTR:
		case syscall.EAGAIN:
			if err := w.waitWritable(); err != nil {
				return written, &os.PathError{Op: "write", Path: "fd " + strconv.Itoa(w.fd), Err: err}
			}
		default:
			return written, &os.PathError{Op: "write", Path: "fd " + strconv.Itoa(w.fd), Err: e}
		}
	}
	return written, nil
}

// waitWritable waits until the descriptor takes more (or fails).
func (w *FDWriter) waitWritable() error {
	type pollFd struct {
		fd             int32
		events, revent int16
	}
	pfd := pollFd{fd: int32(w.fd), events: 0x4} // POLLOUT
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, 0, 0, 0, 0)
		if e != syscall.EINTR {
			if e != 0 {
				return e
			}
			return nil // writable, or an error the next write reports
		}
	}
}

func (w *FDWriter) Close() error { return syscall.Close(w.fd) }
