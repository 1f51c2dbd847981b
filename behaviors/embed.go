// Package behaviors is the engine's own pack: programs written in the
// Scheme-style forms, searched after every configured pack, and the pack
// commands in commands/. Each file's header comment documents its owners,
// methods, inputs and outputs; README.md gathers them.
package behaviors

import "embed"

// FS holds the pack's programs and its commands/ folder.
//
//go:embed *.scm *.lua commands/*.scm
var FS embed.FS
