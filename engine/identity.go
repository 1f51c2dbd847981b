package engine

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"strings"
	"time"

	"github.com/attune-dev/attune/store"
)

// Identity is who appends an engine's actions and from where: every owner
// action records its author, its host and its time (Action).
//
//   - Author: $ATTUNE_AUTHOR; else [identity] author; else git's user.email as read in the
//     configuration's folder (`git config user.email`); else $USER (the
//     login name of the process's user); else "unknown".
//   - Host: $ATTUNE_HOST; else [identity] host; else the machine's hostname; else "unknown".
//
// The host is also the identity an instance id is leased to (lease.go).
type Identity struct {
	Author string
	Host   string
}

// Identity returns the engine's identity, found on first use (it may run
// git once).
func (e *Engine) Identity() Identity {
	e.identOnce.Do(func() {
		e.ident = Identity{Author: os.Getenv("ATTUNE_AUTHOR"), Host: os.Getenv("ATTUNE_HOST")}
		if e.ident.Author == "" {
			e.ident.Author = e.cfg.Identity.Author
		}
		if e.ident.Host == "" {
			e.ident.Host = e.cfg.Identity.Host
		}
		if e.ident.Author == "" {
			e.ident.Author = gitEmail(e.cfg.Dir)
		}
		if e.ident.Author == "" {
			e.ident.Author = os.Getenv("USER")
		}
		if e.ident.Author == "" {
			if u, err := user.Current(); err == nil {
				e.ident.Author = u.Username
			}
		}
		if e.ident.Author == "" {
			e.ident.Author = "unknown"
		}
		if e.ident.Host == "" {
			e.ident.Host, _ = os.Hostname()
		}
		if e.ident.Host == "" {
			e.ident.Host = "unknown"
		}
		by, _ := json.Marshal(e.ident.Author)
		host, _ := json.Marshal(e.ident.Host)
		e.identJSON = []byte(`,"by":` + string(by) + `,"host":` + string(host) + `,"at":`)
	})
	return e.ident
}

// gitEmail is git's user.email in dir, or "" (no git, not set, too slow).
func gitEmail(dir string) string {
	if dir == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "config", "user.email")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// stamp is the part of a stored action after the action itself: the
// engine's author and host, and the time t.
func (e *Engine) stamp(t time.Time) []byte {
	e.Identity()
	b := make([]byte, 0, len(e.identJSON)+40)
	b = append(b, e.identJSON...)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// Action is one entry of an owner's log as the host reads it (Actions).
type Action struct {
	// Seq is the entry's place in the log (the owner's revision after it).
	Seq int64 `json:"seq"`
	// Rev is the reducer revision the action was proposed under; 0 for
	// a reset marker.
	Rev int `json:"rev,omitempty"`
	// Action is the action as proposed (plain data); nil for a reset.
	Action any  `json:"action,omitempty"`
	Reset  bool `json:"reset,omitempty"`
	// Author, Host and At say who appended it, from where and when
	// (Identity); empty for actions stored before attune recorded them.
	Author string    `json:"author,omitempty"`
	Host   string    `json:"host,omitempty"`
	At     time.Time `json:"at,omitzero"`
}

// Actions returns the entries of an owner's log after seq after (at most
// limit; limit <= 0: all), as the instance's pin resolves the owner.
func (i *Instance) Actions(ctx context.Context, owner string, after int64, limit int) ([]Action, error) {
	set, o, err := i.liveOwner(owner)
	if err != nil {
		return nil, err
	}
	defer set.release()
	entries, err := i.e.st.Read(ctx, o.log, after, limit)
	if err != nil {
		return nil, err
	}
	return decodeActions(entries), nil
}

// decodeActions reads stored entries as Actions; an entry that is neither
// an action nor a reset marker comes back with only its Seq.
func decodeActions(entries []store.Entry) []Action {
	out := make([]Action, 0, len(entries))
	for _, en := range entries {
		var raw struct {
			Rev    int    `json:"rev"`
			Action any    `json:"action"`
			Reset  bool   `json:"reset"`
			By     string `json:"by"`
			Host   string `json:"host"`
			At     string `json:"at"`
		}
		a := Action{Seq: en.Seq}
		if json.Unmarshal(en.Data, &raw) == nil {
			a.Rev, a.Action, a.Reset, a.Author, a.Host = raw.Rev, raw.Action, raw.Reset, raw.By, raw.Host
			if t, err := time.Parse(time.RFC3339Nano, raw.At); err == nil {
				a.At = t
			}
		}
		out = append(out, a)
	}
	return out
}
