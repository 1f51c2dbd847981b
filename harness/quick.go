package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/attune-dev/attune/behaviors"
	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/pin"
)

// The quick answer. Most tool events of a session meet nothing: no guard,
// hook or mark of the session's pin is about that tool. A hook process
// that opened the store, brought the instance back and journaled the call
// for such an event would spend most of its time on SQLite. So after every
// event it handles, a hook process leaves the instance's reach
// (engine.Reach: the tool patterns its guards and hooks match, the tools
// its pin defines, whether boundary guards or hooks exist, whether a turn
// and a round are open) in a small file beside the session's lock; and a
// later tool event is answered with no decision, without the store, when
// under the session's lock that file says that nothing can see the call:
//
//   - the event is PreToolUse, PostToolUse or PostToolUseFailure;
//   - the store is an SQLite file, the same file (device and inode; on
//     Windows volume serial number and file ID, see fileid_windows.go) the
//     reach was taken on;
//   - the tool's effects are inside the ceiling of the instance's bot, and
//     no guard or hook pattern of the pin matches the tool's path, and the
//     pin does not define it;
//   - the session has a turn and a round open, or the pin has no turn or
//     round guard or hook (so that the call would open nothing that runs);
//   - for PostToolUse and PostToolUseFailure, the PreToolUse of the call
//     left no call open (it was answered quick too, or never came);
//   - no re-attuned pin waits, and every program of the configuration is
//     still found (a broken configuration is the full path's to report).
//
// Such a call is not journaled, as the engine's own fast path does not
// journal an unseen call outside a turn: a PostToolUse whose PreToolUse
// took the full path (and left the call open) takes it too, so a call is
// journaled whole or not at all; no note can be placed
// or emitted for it, and a replay of the session, which runs only what the
// journal holds, runs the same guards and hooks with the same results.
// A recorded scenario of the session does not show it.
//
// Every full-path event of an instance removes its reach file before it
// changes anything and writes it again once it has answered, under the
// session's lock, so a process killed in between leaves no reach, and the
// next event takes the full path. `hook serve` removes it and writes none
// (its events would pay for the file each time): command hooks of a
// session that serve also answers take the full path after serve's events.

// reachVersion is the format of a reach file.
const reachVersion = 1

type reachFile struct {
	V    int          `json:"v"`
	Dev  uint64       `json:"dev"` // the store file's device and inode
	Ino  uint64       `json:"ino"`
	Seen engine.Reach `json:"reach"`
}

// storeFile is the SQLite file of the configuration's store, "" for any
// other store (a memory store starts empty in each process; a server's
// state is not the file system's).
func storeFile(cfg *config.Config) string {
	kind, target, err := config.ParseStore(cfg.Engine.Store, cfg.Dir)
	if err != nil || kind != config.StoreSQLite {
		return ""
	}
	return target
}

func reachName(dir, instance string) string {
	sum := sha256.Sum256([]byte(instance))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])+".reach")
}

// dropReach removes an instance's reach before an event changes it. A
// reach is a file, never a folder: one unlink (os.Remove tries rmdir too
// when unlink fails, as it does on every event of hook serve, which keeps
// no reach).
func dropReach(dir, instance string) error {
	name := reachName(dir, instance)
	err := syscall.Unlink(name)
	for err == syscall.EINTR {
		err = syscall.Unlink(name)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

// keepReach writes the reach of a live instance (atomically: a reader sees
// the old file, the new one or none).
func keepReach(ctx context.Context, dir, store, instance string, inst *engine.Instance) error {
	seen, ok := inst.Reach(ctx)
	if !ok {
		return nil
	}
	dev, ino, ok := fileID(store)
	if !ok {
		return nil
	}
	data, err := json.Marshal(reachFile{V: reachVersion, Dev: dev, Ino: ino, Seen: seen})
	if err != nil {
		return err
	}
	name := reachName(dir, instance)
	f, err := os.CreateTemp(dir, ".reach-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), name); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

func readReach(dir, store, instance string) (engine.Reach, bool) {
	data, err := os.ReadFile(reachName(dir, instance))
	if err != nil {
		return engine.Reach{}, false
	}
	var rf reachFile
	if json.Unmarshal(data, &rf) != nil || rf.V != reachVersion {
		return engine.Reach{}, false
	}
	if dev, ino, ok := fileID(store); !ok || dev != rf.Dev || ino != rf.Ino {
		return engine.Reach{}, false
	}
	return rf.Seen, true
}

// instanceID is the instance an event belongs to and the bot a new one
// runs: the session's, or its subagent's child instance.
func instanceID(d Dialect, h *config.HookHarness, ev Event) (id, main, bot string) {
	main, bot = d.Name()+"/"+ev.Session, h.Bot
	if ev.AgentID == "" {
		return main, main, bot
	}
	if b, ok := h.Agents[ev.AgentType]; ok {
		bot = b
	}
	return main + "/agent/" + ev.AgentID, main, bot
}

// Quick answers a tool event that nothing of its session can see, without
// opening the store (see the comment above): ok is false when the event
// needs the full path (Open, Handle).
func Quick(ctx context.Context, cfg *config.Config, d Dialect, ev Event) (a Answer, ok bool) {
	if (ev.Kind != ToolPre && ev.Kind != ToolPost && ev.Kind != ToolFail) || ev.Tool == "" {
		return Answer{}, false
	}
	store := storeFile(cfg)
	if store == "" || !programsFound(cfg) {
		return Answer{}, false
	}
	h := cfg.Hook(d.Name())
	id, main, _ := instanceID(d, h, ev)
	dir := store + ".locks"
	if _, err := os.Stat(dir); err != nil {
		return Answer{}, false // no event of this store was handled yet
	}
	unlock, err := lockSession(ctx, dir, main)
	if err != nil {
		return Answer{}, false
	}
	defer unlock()
	seen, ok := readReach(dir, store, id)
	if !ok || seen.Pending || (seen.Boundaries && !(seen.InTurn && seen.InRound)) {
		return Answer{}, false
	}
	bot := cfg.Bots[seen.Bot]
	if bot == nil {
		return Answer{}, false
	}
	effects, named := h.Tools[ev.Tool]
	if !named {
		effects = d.Effects(ev.Tool)
	}
	for _, e := range effects {
		if !slices.Contains(bot.Ceiling, e) {
			return Answer{}, false
		}
	}
	if seen.Sees(d.ToolPath(ev.Tool)) {
		return Answer{}, false
	}
	if ev.Kind != ToolPre && slices.Contains(seen.Open, ev.ToolUseID) {
		return Answer{}, false // its PreToolUse took the full path: complete that call
	}
	return Answer{}, true
}

// programsFound: every program the configuration selects is in a pack
// (the engine refuses to start otherwise).
func programsFound(cfg *config.Config) bool {
	packs := make(pin.Packs, 0, len(cfg.Engine.Packs)+1)
	for _, dir := range cfg.Engine.Packs {
		packs = append(packs, pin.Pack{Name: dir, FS: os.DirFS(dir)})
	}
	packs = append(packs, pin.Pack{Name: "behaviors", ID: pin.EnginePackID, FS: behaviors.FS})
	return cfg.Validate(func(name string) bool { _, _, ok := packs.Find(name); return ok }) == nil
}
