package scheme

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// luaKeywords are the reserved words of Lua 5.1 (and goto, which gopher-lua
// also reserves).
var luaKeywords = map[string]bool{
	"and": true, "break": true, "do": true, "else": true, "elseif": true,
	"end": true, "false": true, "for": true, "function": true, "goto": true,
	"if": true, "in": true, "local": true, "nil": true, "not": true, "or": true,
	"repeat": true, "return": true, "then": true, "true": true, "until": true,
	"while": true,
}

// charNames spells the characters that cannot appear in a Lua identifier.
// Any other such character c becomes _uHEX (its code point in hex).
var charNames = map[rune]string{
	'-': "_", '?': "_p", '!': "_x",
	'*': "_star", '+': "_plus", '<': "_lt", '>': "_gt", '=': "_eq",
	'%': "_pct", '&': "_amp", '$': "_dollar", '^': "_caret", '~': "_tilde",
	'@': "_at", '#': "_hash", '|': "_bar", ':': "_colon", '/': "_slash",
	'.': "_dot", '\\': "_bslash",
}

// mangleChars rewrites each character of s that a Lua identifier cannot hold.
// It keeps letters, digits and '_'.
func mangleChars(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case charNames[r] != "":
			b.WriteString(charNames[r])
		default:
			b.WriteString("_u" + strconv.FormatInt(int64(r), 16))
		}
	}
	return b.String()
}

// isIdent reports whether s is a Lua identifier that is not a keyword.
func isIdent(s string) bool {
	if s == "" || luaKeywords[s] {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' && i > 0) {
			return false
		}
	}
	return true
}

// mangleVar turns one segment of a symbol into a Lua variable name: characters
// are mangled, a leading digit gets a '_' in front, a Lua keyword gets a '_'
// after it.
func mangleVar(s string) string {
	m := mangleChars(s)
	if m[0] >= '0' && m[0] <= '9' {
		m = "_" + m
	}
	if luaKeywords[m] {
		m += "_"
	}
	return m
}

// keyName is the table key a keyword stands for: :post-fail is "post_fail".
func keyName(s string) string { return mangleChars(s) }

// segments splits a symbol at '/' and '.' when every part is non-empty: a/b
// and a.b both name field b of a. Otherwise the symbol is one segment.
func segments(sym string) []string {
	if !strings.ContainsAny(sym, "/.") {
		return []string{sym}
	}
	parts := strings.FieldsFunc(sym, func(r rune) bool { return r == '/' || r == '.' })
	if len(parts) != strings.Count(sym, "/")+strings.Count(sym, ".")+1 {
		return []string{sym}
	}
	return parts
}

// varName is the Lua variable a symbol's first segment names.
func varName(sym string) string { return mangleVar(segments(sym)[0]) }

// luaPath lowers a symbol to a Lua variable or field access: a/b-c is
// a.b_c, t.end is t["end"].
func luaPath(sym string) (path string, dotted bool) {
	segs := segments(sym)
	var b strings.Builder
	b.WriteString(mangleVar(segs[0]))
	for _, s := range segs[1:] {
		b.WriteString(fieldAccess(keyName(s)))
	}
	return b.String(), len(segs) > 1
}

// fieldAccess is .k for an identifier key k, and ["k"] otherwise.
func fieldAccess(k string) string {
	if isIdent(k) {
		return "." + k
	}
	return "[" + luaString(k) + "]"
}

// tableKey is k = for an identifier key k, and ["k"] = otherwise.
func tableKey(k string) string {
	if isIdent(k) {
		return k + " = "
	}
	return "[" + luaString(k) + "] = "
}

// luaString quotes s as a Lua string literal on one line. Control characters
// and bytes that are not valid UTF-8 are written as decimal escapes.
func luaString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			b.WriteString(`\` + pad3(int(c)))
		case c >= 0x80:
			r, w := decodeRune(s[i:])
			if r < 0 {
				b.WriteString(`\` + pad3(int(c)))
				i++
				continue
			}
			b.WriteString(s[i : i+w])
			i += w
			continue
		default:
			b.WriteByte(c)
		}
		i++
	}
	b.WriteByte('"')
	return b.String()
}

func pad3(n int) string {
	s := strconv.Itoa(n)
	return strings.Repeat("0", 3-len(s)) + s
}

// decodeRune decodes the first character of s; it returns -1 for a byte that
// is not valid UTF-8.
func decodeRune(s string) (rune, int) {
	r, w := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && w <= 1 {
		return -1, 1
	}
	return r, w
}
