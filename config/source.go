package config

import (
	"fmt"
	"unicode/utf8"
)

// Limits on configuration sources. They are far above any real
// configuration; they keep hostile input from exhausting memory or time.
const (
	// MaxSize is the largest configuration source, in bytes, that Load and
	// Parse accept.
	MaxSize = 1 << 20
	// MaxDepth bounds nesting: brackets ([ and {) open at once, the parts of
	// one dotted key or table header, and the depth of a key path.
	MaxDepth = 64
)

// CheckSource checks a TOML source before it is parsed: its size, that it
// is UTF-8, and that its nesting stays within MaxDepth. The TOML parser's
// time and memory grow faster than linearly with the nesting of inline
// tables and the length of dotted keys, so a host that parses a file
// holding an inline configuration (a scenario) should call CheckSource on
// it first. Parse and Load call it.
func CheckSource(file string, data []byte) error {
	if len(data) > MaxSize {
		return &Error{File: file, Msg: fmt.Sprintf("the file is %d bytes; the limit is %d", len(data), MaxSize)}
	}
	line, lineStart := 1, 0
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return &Error{File: file, Line: line, Col: i - lineStart + 1,
				Msg: fmt.Sprintf("invalid UTF-8 (byte 0x%02x); TOML files must be UTF-8", data[i])}
		}
		if r == '\n' {
			line, lineStart = line+1, i+1
		}
		i += n
	}
	return checkNesting(file, data)
}

// checkNesting scans the source as TOML's lexer would, skipping strings and
// comments, and fails when brackets nest, or dots chain in one key, deeper
// than MaxDepth. It does not check syntax: the parser does.
func checkNesting(file string, data []byte) error {
	const (
		normal = iota
		comment
		basic     // "..."
		literal   // '...'
		mlBasic   // """..."""
		mlLiteral // '''...'''
	)
	state := normal
	depth, dots := 0, 0
	line, lineStart := 1, 0
	fail := func(i int, what string) error {
		return &Error{File: file, Line: line, Col: i - lineStart + 1,
			Msg: fmt.Sprintf("%s nested deeper than %d", what, MaxDepth)}
	}
	has := func(i int, s string) bool {
		return len(data)-i >= len(s) && string(data[i:i+len(s)]) == s
	}
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == '\n' {
			line, lineStart = line+1, i+1
		}
		switch state {
		case comment:
			if c == '\n' {
				state = normal
				dots = 0
			}
		case basic:
			switch c {
			case '\\':
				i++ // an escaped character never ends the string
				if i < len(data) && data[i] == '\n' {
					line, lineStart = line+1, i+1
				}
			case '"', '\n':
				state = normal
			}
		case literal:
			if c == '\'' || c == '\n' {
				state = normal
			}
		case mlBasic:
			switch {
			case c == '\\':
				i++
				if i < len(data) && data[i] == '\n' {
					line, lineStart = line+1, i+1
				}
			case has(i, `"""`):
				state = normal
				i += 2
			}
		case mlLiteral:
			if has(i, `'''`) {
				state = normal
				i += 2
			}
		default:
			switch c {
			case '#':
				state = comment
			case '"':
				if has(i, `"""`) {
					state = mlBasic
					i += 2
				} else {
					state = basic
				}
			case '\'':
				if has(i, `'''`) {
					state = mlLiteral
					i += 2
				} else {
					state = literal
				}
			case '[', '{':
				depth++
				dots = 0
				if depth > MaxDepth {
					return fail(i, "brackets")
				}
			case ']', '}':
				depth = max(0, depth-1)
				dots = 0
			case '=', ',', '\n':
				dots = 0
			case '.':
				dots++
				if dots >= MaxDepth {
					return fail(i, "dotted keys")
				}
			}
		}
	}
	return nil
}
