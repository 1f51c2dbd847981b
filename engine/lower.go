package engine

import "github.com/attune-dev/attune/scheme"

// lowerScheme turns a .scm program into Lua, line-aligned with its source.
func lowerScheme(file string, src []byte) (string, error) { return scheme.Lower(file, src) }
