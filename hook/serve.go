package hook

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// CheckListen refuses a listen address that is not loopback unless
// anyAddr: the hook server answers for the agent's permissions, so by
// default only the local machine may reach it.
func CheckListen(addr string, anyAddr bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %s: want HOST:PORT (%v)", addr, err)
	}
	if anyAddr {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--listen %s: not a loopback address; hook answers decide what the agent may run, so attune listens on 127.0.0.1 or ::1 unless --listen-any is given", addr)
}

// Handler answers the agent's http hooks: each POST carries one event as
// JSON and gets the answer as JSON (status 200), the same as the command
// hook's stdin and stdout. Events of one session are serialized as for
// command hooks; instances stay warm between events when the runtime was
// opened with Options.Warm.
func (r *Runtime) Handler(d Dialect, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost {
			http.Error(w, "attune hook serve: POST one hook event as JSON", http.StatusMethodNotAllowed)
			return
		}
		data, err := io.ReadAll(io.LimitReader(req.Body, MaxEvent+1))
		var ev Event
		if err != nil {
			ev, err = Named(d, data), fmt.Errorf("%w: %v", ErrIncomplete, err)
		} else {
			ev, err = Read(d, data)
		}
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			fmt.Fprintf(r.log, "attune hook serve %s: %v\n", d.Name(), err)
			w.Write(d.Render(ev, BadEvent(ev, err)))
			return
		}
		ctx, cancel := context.WithTimeout(req.Context(), timeout)
		defer cancel()
		w.Write(d.Render(ev, r.Handle(ctx, d, ev)))
	})
}

// MaxEvent bounds one event's JSON (16 MiB).
const MaxEvent = 16 << 20
