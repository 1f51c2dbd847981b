// Package behaviors is the engine's own pack: programs written in the
// Scheme-style forms, searched after every configured pack. Each file's
// header comment documents its owners, methods, inputs and outputs.
package behaviors

import "embed"

// FS holds the pack's programs and its commands/ folder.
//
//go:embed *.scm
var FS embed.FS
