// Package pin resolves a bot's authored selection into a pin: for each
// selected program, in the bot's behaviors order (pin order), its name, the
// sha256 of its source and the hash of its configuration, plus the command
// files of the packs. Sources and configurations are stored
// content-addressed in the store; a pin names them by hash only, so an
// instance that has a pin keeps running exactly those sources whatever
// happens on disk (R1.6, R2.1).
//
// Packs are folders of programs searched in order; the first that holds a
// name wins. Pin values are immutable once built and safe for concurrent
// reads.
package pin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/attune-dev/attune/internal/jsonscan"
	"github.com/attune-dev/attune/store"
)

// Program is one selected program in a pin.
type Program struct {
	Name string `json:"name"`
	File string `json:"file"` // file name in its pack: "tasks.scm"
	Pack string `json:"pack"` // the pack it came from, for messages
	// PackID is the identity of that pack (Pack.Identity): what owners
	// are claimed by. Empty in pins made before packs had identities:
	// DefaultPackID(Pack) stands for it.
	PackID string `json:"pack_id,omitempty"`
	SHA256 string `json:"sha256"`
	// Config is the sha256 of the program's configuration (canonical JSON).
	Config string `json:"config"`
}

// Command is one pack command file (commands/NAME.scm or .lua).
type Command struct {
	Name   string `json:"name"`
	File   string `json:"file"`
	Pack   string `json:"pack"`
	SHA256 string `json:"sha256"`
}

// Pin is the resolved selection of one instance.
type Pin struct {
	Bot      string    `json:"bot"`
	Programs []Program `json:"programs"`
	Commands []Command `json:"commands,omitempty"`
}

// Command returns the pinned command file NAME.
func (p *Pin) Command(name string) (Command, bool) {
	for _, c := range p.Commands {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// Has reports whether the pin selects the program.
func (p *Pin) Has(name string) bool {
	for _, pr := range p.Programs {
		if pr.Name == name {
			return true
		}
	}
	return false
}

// Pack is one folder of programs.
type Pack struct {
	Name string // a path or "behaviors" for the engine's own pack
	FS   fs.FS
	// ID is the pack's identity; empty: its pack.toml's id or the base
	// name of Name (Identity).
	ID string
}

// Packs is the search order.
type Packs []Pack

// The program languages: a pack is searched for NAME.lua, then NAME.scm.
const (
	LuaExt    = ".lua"
	SchemeExt = ".scm"
)

// Find returns the first pack and file name holding program NAME.
func (ps Packs) Find(name string) (Pack, string, bool) {
	for _, p := range ps {
		for _, ext := range [...]string{LuaExt, SchemeExt} {
			if st, err := fs.Stat(p.FS, name+ext); err == nil && !st.IsDir() {
				return p, name + ext, true
			}
		}
	}
	return Pack{}, "", false
}

// Shadowed lists programs that an earlier pack hides in a later one.
func (ps Packs) Shadowed() []string {
	seen := map[string]string{}
	var out []string
	for _, p := range ps {
		entries, _ := fs.ReadDir(p.FS, ".")
		for _, e := range entries {
			ext := path.Ext(e.Name())
			if e.IsDir() || (ext != ".lua" && ext != ".scm") {
				continue
			}
			name := strings.TrimSuffix(e.Name(), ext)
			if first, ok := seen[name]; ok && first != p.Name {
				out = append(out, fmt.Sprintf("program %s in pack %s is shadowed by pack %s", name, p.Name, first))
				continue
			}
			seen[name] = p.Name
		}
	}
	return out
}

// commandFiles lists command files by name, the first pack winning.
func (ps Packs) commandFiles() []struct {
	name, file string
	pack       Pack
} {
	var out []struct {
		name, file string
		pack       Pack
	}
	seen := map[string]bool{}
	for _, p := range ps {
		entries, _ := fs.ReadDir(p.FS, "commands")
		for _, e := range entries {
			ext := path.Ext(e.Name())
			if e.IsDir() || (ext != ".lua" && ext != ".scm") {
				continue
			}
			name := strings.TrimSuffix(e.Name(), ext)
			if seen[name] {
				continue
			}
			seen[name] = true
			out = append(out, struct {
				name, file string
				pack       Pack
			}{name, "commands/" + e.Name(), p})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// Resolve builds the pin of a bot's authored selection (R2.2): each
// program's source and configuration is stored content-addressed.
func Resolve(ctx context.Context, st store.Store, packs Packs, bot string, behaviors []string, configs map[string]map[string]any) (*Pin, error) {
	p := &Pin{Bot: bot}
	for _, name := range behaviors {
		pack, file, ok := packs.Find(name)
		if !ok {
			return nil, fmt.Errorf("bot %s selects program %s, which no pack holds", bot, name)
		}
		src, err := fs.ReadFile(pack.FS, file)
		if err != nil {
			return nil, fmt.Errorf("program %s: %w", name, err)
		}
		sha, err := st.PutBlob(ctx, src)
		if err != nil {
			return nil, err
		}
		id, err := pack.Identity()
		if err != nil {
			return nil, err
		}
		cfg := configs[name]
		if cfg == nil {
			cfg = map[string]any{}
		}
		data, err := json.Marshal(cfg) // map keys are sorted: canonical
		if err != nil {
			return nil, fmt.Errorf("program %s: configuration: %w", name, err)
		}
		csha, err := st.PutBlob(ctx, data)
		if err != nil {
			return nil, err
		}
		p.Programs = append(p.Programs, Program{Name: name, File: file, Pack: pack.Name, PackID: id, SHA256: sha, Config: csha})
	}
	for _, c := range packs.commandFiles() {
		src, err := fs.ReadFile(c.pack.FS, c.file)
		if err != nil {
			return nil, err
		}
		if !offered(commandRequires(c.file, src), behaviors) {
			continue // its programs are not selected (requires.go)
		}
		sha, err := st.PutBlob(ctx, src)
		if err != nil {
			return nil, err
		}
		p.Commands = append(p.Commands, Command{Name: c.name, File: c.file, Pack: c.pack.Name, SHA256: sha})
	}
	return p, nil
}

const recordKind = "pin"

// Save stores an instance's pin.
func Save(ctx context.Context, st store.Store, instance string, p *Pin) error {
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return st.PutRecord(ctx, recordKind, instance, data)
}

// Load returns an instance's stored pin, or store.ErrNotFound.
func Load(ctx context.Context, st store.Store, instance string) (*Pin, error) {
	data, err := st.GetRecord(ctx, recordKind, instance)
	if err != nil {
		return nil, err
	}
	var p Pin
	if readPin(data, &p) {
		return &p, nil
	}
	p = Pin{}
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("pin of %s: %w", instance, err)
	}
	return &p, nil
}

// readPin decodes a stored pin as json.Unmarshal does, with the one
// scanner (internal/jsonscan): every event of a hook process loads its
// instance's pin, and encoding/json would build its tables for the pin's
// types first. False where encoding/json decides: a name in another case
// or with escapes, a string with escapes or other than ASCII, text that
// is not JSON, a value of another type.
func readPin(data []byte, p *Pin) bool {
	fields := [...]string{"bot", "programs", "commands"}
	var out [len(fields)][]byte
	if ok, _ := jsonscan.Members(data, fields[:], out[:], jsonscan.Options{}); !ok || !jsonscan.IntoString(out[0], &p.Bot) {
		return false
	}
	progFields := [...]string{"name", "file", "pack", "pack_id", "sha256", "config"}
	cmdFields := [...]string{"name", "file", "pack", "sha256"}
	ok := pinList(out[1], &p.Programs, func(raw []byte, pr *Program) bool {
		var m [len(progFields)][]byte
		if ok, _ := jsonscan.Members(raw, progFields[:], m[:], jsonscan.Options{}); !ok {
			return false
		}
		return jsonscan.IntoString(m[0], &pr.Name) && jsonscan.IntoString(m[1], &pr.File) && jsonscan.IntoString(m[2], &pr.Pack) &&
			jsonscan.IntoString(m[3], &pr.PackID) && jsonscan.IntoString(m[4], &pr.SHA256) && jsonscan.IntoString(m[5], &pr.Config)
	})
	return ok && pinList(out[2], &p.Commands, func(raw []byte, c *Command) bool {
		var m [len(cmdFields)][]byte
		if ok, _ := jsonscan.Members(raw, cmdFields[:], m[:], jsonscan.Options{}); !ok {
			return false
		}
		return jsonscan.IntoString(m[0], &c.Name) && jsonscan.IntoString(m[1], &c.File) && jsonscan.IntoString(m[2], &c.Pack) && jsonscan.IntoString(m[3], &c.SHA256)
	})
}

// pinList reads a list of objects, each with one; absent or null leave
// the list as it is, as encoding/json does.
func pinList[T any](raw []byte, dst *[]T, one func([]byte, *T) bool) bool {
	if raw == nil || string(raw) == "null" {
		return true
	}
	items, ok := jsonscan.Items(raw)
	if !ok {
		return false
	}
	out := make([]T, len(items))
	for k, it := range items {
		if string(it) != "null" && !one(it, &out[k]) { // a null item is the zero value
			return false
		}
	}
	*dst = out
	return true
}

// MissingError is R1.6's failure: the pinned blob cannot be found.
type MissingError struct {
	Program string
	SHA256  string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("pin-missing: program %s sha256 %s", e.Program, e.SHA256)
}

// Source returns the pinned source of a program, never the file on disk.
func Source(ctx context.Context, st store.Store, name, sha string) ([]byte, error) {
	data, err := st.GetBlob(ctx, sha)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &MissingError{Program: name, SHA256: sha}
	}
	return data, err
}

// Config returns a pinned program's configuration.
func Config(ctx context.Context, st store.Store, pr Program) (map[string]any, error) {
	data, err := st.GetBlob(ctx, pr.Config)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("pin-missing: configuration of program %s sha256 %s", pr.Name, pr.Config)
	}
	if err != nil {
		return nil, err
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("configuration of program %s: %w", pr.Name, err)
	}
	return cfg, nil
}
