package main

import (
	"io/fs"
	"path"
	"strings"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/scheme"
)

// rewriteNotes lists, for every program a bot selects and every command
// file of the packs, the statements that compile through temporaries
// because gopher-lua would compile them wrongly as written (see
// luabind/rewrite.go). They are notes, not problems: the programs run as
// written; the note says where and how to write the same code by hand.
func rewriteNotes(cfg *config.Config, packs pin.Packs) []string {
	var out []string
	seen := map[string]bool{}
	note := func(p pin.Pack, file string) {
		key := p.Name + "\x00" + file
		if seen[key] {
			return
		}
		seen[key] = true
		src, err := fs.ReadFile(p.FS, file)
		if err != nil {
			return // loading reports it
		}
		shown := path.Join(p.Name, file)
		if strings.HasSuffix(file, ".scm") {
			lowered, err := scheme.Lower(shown, src)
			if err != nil {
				return // loading reports it
			}
			src = []byte(lowered)
		}
		rs, err := luabind.Rewrites(shown, src)
		if err != nil {
			return // loading reports it
		}
		for _, r := range rs {
			out = append(out, r.String())
		}
	}
	for _, name := range cfg.BotOrder {
		for _, prog := range cfg.Bots[name].Behaviors {
			if p, file, ok := packs.Find(prog); ok {
				note(p, file)
			}
		}
	}
	for _, p := range packs {
		entries, _ := fs.ReadDir(p.FS, "commands")
		for _, e := range entries {
			if !e.IsDir() && (strings.HasSuffix(e.Name(), ".lua") || strings.HasSuffix(e.Name(), ".scm")) {
				note(p, "commands/"+e.Name())
			}
		}
	}
	return out
}
