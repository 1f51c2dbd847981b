package engine

import "github.com/attune-dev/attune/luabind"

// CopyPlain returns v as plain data, deep-copied (luabind.CopyPlain: Go
// numbers become float64, other Go values the plain data of their JSON form).
func CopyPlain(v any) any { return luabind.CopyPlain(v) }

// Plain returns v as plain data: v itself when it is plain already, else a
// converted copy (luabind.Plain).
func Plain(v any) any { return luabind.Plain(v) }
