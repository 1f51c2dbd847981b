package main

import (
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/scheme"
)

// warnShadowedCall prints a warning for every handler of a selected program
// whose parameter named `call` hides the call namespace and is then used
// as call.method or call.tool (luabind.ShadowedCall).
func warnShadowedCall(w io.Writer, cfg *config.Config, packs pin.Packs) {
	seen := map[string]bool{}
	for _, bot := range cfg.BotOrder {
		b := cfg.Bots[bot]
		if b == nil {
			continue
		}
		for _, name := range b.Behaviors {
			if seen[name] {
				continue
			}
			seen[name] = true
			p, file, ok := packs.Find(name)
			if !ok {
				continue
			}
			src, err := fs.ReadFile(p.FS, file)
			if err != nil {
				continue
			}
			shown := p.Name + "/" + file
			if strings.HasSuffix(file, ".scm") {
				lowered, err := scheme.Lower(shown, src)
				if err != nil {
					continue // loading reports it
				}
				src = []byte(lowered)
			}
			for _, msg := range luabind.ShadowedCall(shown, src) {
				fmt.Fprintln(w, msg)
			}
		}
	}
}
