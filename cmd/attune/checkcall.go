package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/luabind"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/scheme"
)

// warnShadowedCall prints a warning for every handler of a selected program
// whose parameter named `call` hides the call namespace and is then used
// as call.method or call.tool (luabind.ShadowedCall).
func warnShadowedCall(w io.Writer, cfg *config.Config, packs pin.Packs) {
	eachProgram(cfg, packs, func(shown string, src []byte) {
		for _, msg := range luabind.ShadowedCall(shown, src) {
			fmt.Fprintln(w, msg)
		}
	})
}

// undefinedCalls are the calls of the selected programs that can only fail:
// of a name that is not defined, or of a form a namespace does not hold
// (luabind.UndefinedCalls), each with the nearest name.
func undefinedCalls(cfg *config.Config, packs pin.Packs) []error {
	var out []error
	known, hints := engine.ScriptNames(), scheme.FormNames()
	eachProgram(cfg, packs, func(shown string, src []byte) {
		for _, msg := range luabind.UndefinedCalls(shown, src, known, hints) {
			out = append(out, errors.New(msg))
		}
	})
	return out
}

// eachProgram calls fn with the Lua source of every program the bots
// select, once each (a .scm program lowered, its lines the source's),
// named as pack/file. A program that cannot be read or lowered is left
// to loading, which reports it.
func eachProgram(cfg *config.Config, packs pin.Packs, fn func(shown string, src []byte)) {
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
					continue
				}
				src = []byte(lowered)
			}
			fn(shown, src)
		}
	}
}
