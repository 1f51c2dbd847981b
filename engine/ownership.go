package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

// Owners are owned. A project or global owner belongs to the program that
// first declared a reducer for it: the program's name and its pack's
// identity (pin.Pack.Identity: the pack.toml id, or the pack folder's base
// name, "attune" for the engine's own pack; never a path) are recorded
// with the owner (record kind "owner-program", key the owner's log) when a
// program declaring it first loads. Every checkout of a repository, at any
// path on any machine, thus serves the same owners. Another program that declares a
// reducer for the same owner is refused at load with an `owner:` error
// naming both, so a program of another bot cannot fold, forge or read an
// owner by declaring its name. Session owners live and die with their
// session and are not claimed.
//
// Handing an owner to a new program (a program renamed, or moved to
// another pack) is the host's act: Engine.HandOwner records the new
// program; its reducer then folds the existing log (with :migrate for
// older actions, or after Instance.ResetOwner).

type ownerProgram struct {
	Program string `json:"program"`
	// PackID is the claiming pack's identity; empty in a claim recorded
	// before packs had identities, whose Pack was the pack's path.
	PackID string `json:"pack_id,omitempty"`
	// Pack is where the claiming program came from, for messages only.
	Pack string `json:"pack"`
}

// same reports whether two claims name one program of one pack identity.
func (a ownerProgram) same(b ownerProgram) bool {
	return a.Program == b.Program && a.PackID == b.PackID
}

// claimOwners records r's program as the owner of every project and
// global owner it declares, or refuses the load when another program owns
// one.
func (e *Engine) claimOwners(ctx context.Context, r *registry) error {
	path, id := r.pack()
	me := ownerProgram{Program: r.program, PackID: id, Pack: path}
	val, _ := json.Marshal(me)
	for _, rd := range r.reducers {
		for _, scope := range rd.scopes {
			if scope == ScopeSession {
				continue
			}
			log := e.ownerLogFor(scope, rd.name)
			// claimed already (every load but the first): a read, no
			// write transaction
			stored, err := e.st.GetRecord(ctx, "owner-program", log)
			if errors.Is(err, store.ErrNotFound) {
				stored, _, err = e.st.PutRecordIfAbsent(ctx, "owner-program", log, val)
			}
			if err != nil {
				return err
			}
			var first ownerProgram
			if err := json.Unmarshal(stored, &first); err != nil {
				return fmt.Errorf("owner: %s@%s: owner record: %w", rd.name, scope, err)
			}
			if first.PackID == "" && first.Program == me.Program {
				// A claim made before packs had identities names the
				// pack by its path: the program of that name claims it
				// again under its pack's identity (the migration).
				if err := e.st.PutRecord(ctx, "owner-program", log, val); err != nil {
					return err
				}
				continue
			}
			if !first.same(me) {
				return errorf(CodeOwner, "owner: %s owner %s belongs to program %s (pack %s), which declared it first; program %s (pack %s) may not declare a reducer for it (at %s). Call the owner's methods instead, or have the host hand it over (Engine.HandOwner)",
					scope, rd.name, first.Program, first.packName(), me.Program, me.packName(), rd.pos)
			}
		}
	}
	return nil
}

func (e *Engine) ownerLogFor(scope, name string) string {
	key := "-"
	if scope == ScopeProject {
		key = e.project()
	}
	return ownerLog(scope, key, name)
}

// packName is the claim's pack identity, with its path when that differs.
func (a ownerProgram) packName() string {
	switch {
	case a.PackID == "":
		return a.Pack
	case !filepath.IsAbs(a.Pack): // the engine's own pack, a test's
		return a.PackID
	}
	return a.PackID + " at " + a.Pack
}

// pack is the pack r's program was pinned from: its path and identity.
func (r *registry) pack() (path, id string) {
	if r.set != nil && r.set.pin != nil {
		for _, pr := range r.set.pin.Programs {
			if pr.Name == r.program {
				id = pr.PackID
				if id == "" { // a pin made before packs had identities
					id = pin.DefaultPackID(pr.Pack)
				}
				return pr.Pack, id
			}
		}
	}
	return "", pin.DefaultPackID("")
}

// HandOwner hands a project or global owner ("offload@project",
// "memory@global") to another program, named with the identity of the
// pack it comes from (its pack.toml id, or its folder's base name; an
// absolute folder path stands for its base name). From then on only that
// program may declare a reducer for it; its reducer folds the existing log.
func (e *Engine) HandOwner(ctx context.Context, owner, program, pack string) error {
	name, scope, err := splitOwner(owner)
	if err != nil {
		return errorf(CodeOwner, "owner: %v", err)
	}
	if scope != ScopeProject && scope != ScopeGlobal {
		return errorf(CodeOwner, "owner: hand over %s: name the scope, project or global (NAME@project)", owner)
	}
	if strings.TrimSpace(program) == "" {
		return errorf(CodeOwner, "owner: hand over %s: name the program", owner)
	}
	id := pack
	if filepath.IsAbs(pack) { // a pack named by its folder: its identity
		id = pin.DefaultPackID(pack)
	}
	val, _ := json.Marshal(ownerProgram{Program: program, PackID: id, Pack: pack})
	return e.st.PutRecord(ctx, "owner-program", e.ownerLogFor(scope, name), val)
}
