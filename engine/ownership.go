package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Owners are owned. A project or global owner belongs to the program that
// first declared a reducer for it: the program's name and pack are recorded
// with the owner (record kind "owner-program", key the owner's log) when a
// program declaring it first loads. Another program that declares a
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
	Pack    string `json:"pack"`
}

// claimOwners records r's program as the owner of every project and
// global owner it declares, or refuses the load when another program owns
// one.
func (e *Engine) claimOwners(ctx context.Context, r *registry) error {
	me := ownerProgram{Program: r.program, Pack: r.pack()}
	val, _ := json.Marshal(me)
	for _, rd := range r.reducers {
		for _, scope := range rd.scopes {
			if scope == ScopeSession {
				continue
			}
			log := e.ownerLogFor(scope, rd.name)
			stored, _, err := e.st.PutRecordIfAbsent(ctx, "owner-program", log, val)
			if err != nil {
				return err
			}
			var first ownerProgram
			if err := json.Unmarshal(stored, &first); err != nil {
				return fmt.Errorf("owner: %s@%s: owner record: %w", rd.name, scope, err)
			}
			if first != me {
				return errorf(CodeOwner, "owner: %s owner %s belongs to program %s (pack %s), which declared it first; program %s (pack %s) may not declare a reducer for it (at %s). Call the owner's methods instead, or have the host hand it over (Engine.HandOwner)",
					scope, rd.name, first.Program, first.Pack, me.Program, me.Pack, rd.pos)
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

// pack is the pack r's program was pinned from.
func (r *registry) pack() string {
	if r.set != nil && r.set.pin != nil {
		for _, pr := range r.set.pin.Programs {
			if pr.Name == r.program {
				return pr.Pack
			}
		}
	}
	return ""
}

// HandOwner hands a project or global owner ("offload@project",
// "memory@global") to another program, named with the pack it comes from
// (as `attune check` and load errors print them). From then on only that
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
	val, _ := json.Marshal(ownerProgram{Program: program, Pack: pack})
	return e.st.PutRecord(ctx, "owner-program", e.ownerLogFor(scope, name), val)
}
