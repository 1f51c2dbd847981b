package scenario

import (
	"strings"
)

// lines finds where keys of [[step]] tables are written. toml.MetaData
// keeps one position per key path, and every step shares its key paths
// (step.op), so step positions come from reading the text: headers and
// `key =` lines outside multi-line strings and comments.
type lines struct {
	text []string
	code []bool // the line starts outside a multi-line string
}

func newLines(data []byte) *lines {
	l := &lines{text: strings.Split(string(data), "\n")}
	l.code = make([]bool, len(l.text))
	delim := "" // the open multi-line string's delimiter
	for i, ln := range l.text {
		l.code[i] = delim == ""
		delim = scanLine(ln, delim)
	}
	return l
}

// scanLine returns the multi-line string delimiter still open at the end
// of a line that starts with delim open ("" when none).
func scanLine(ln, delim string) string {
	for i := 0; i < len(ln); {
		if delim != "" {
			j := strings.Index(ln[i:], delim)
			if j < 0 {
				return delim
			}
			i += j + len(delim)
			for i < len(ln) && ln[i] == delim[0] { // ''''' closes with quotes inside
				i++
			}
			delim = ""
			continue
		}
		switch c := ln[i]; {
		case c == '#':
			return ""
		case strings.HasPrefix(ln[i:], `'''`), strings.HasPrefix(ln[i:], `"""`):
			delim = ln[i : i+3]
			i += 3
		case c == '\'':
			j := strings.IndexByte(ln[i+1:], '\'')
			if j < 0 {
				return ""
			}
			i += j + 2
		case c == '"':
			i++
			for i < len(ln) && ln[i] != '"' {
				if ln[i] == '\\' {
					i++
				}
				i++
			}
			i++
		default:
			i++
		}
	}
	return delim
}

// header returns the table header of line i: its key parts and whether it
// is an array-of-tables header; ok is false when the line is no header.
func (l *lines) header(i int) (parts []string, array, ok bool) {
	if !l.code[i] {
		return nil, false, false
	}
	t := strings.TrimSpace(l.text[i])
	switch {
	case strings.HasPrefix(t, "[["):
		end := strings.Index(t, "]]")
		if end < 0 {
			return nil, false, false
		}
		return splitKey(t[2:end]), true, true
	case strings.HasPrefix(t, "["):
		end := strings.LastIndex(t, "]")
		if end < 0 {
			return nil, false, false
		}
		return splitKey(t[1:end]), false, true
	}
	return nil, false, false
}

// stepHeaders returns the 1-based lines of the [[step]] headers, in order.
func (l *lines) stepHeaders() []int {
	var out []int
	for i := range l.text {
		if parts, array, ok := l.header(i); ok && array && len(parts) == 1 && parts[0] == "step" {
			out = append(out, i+1)
		}
	}
	return out
}

// stepKeyLine returns the line of keyPath inside the step whose header is
// at line header (1-based): the line that writes it, else the line of the
// closest enclosing key (an inline table, a [step.expect] header); 0 when
// the text does not show it.
func (l *lines) stepKeyLine(header int, keyPath []string) int {
	if header <= 0 || header > len(l.text) {
		return 0
	}
	var prefix []string
	best, bestLen := 0, 0
	for i := header; i < len(l.text); i++ {
		if parts, _, ok := l.header(i); ok {
			if len(parts) < 2 || parts[0] != "step" {
				break
			}
			prefix = parts[1:]
			if n := commonPrefix(prefix, keyPath); n == len(prefix) && n > bestLen {
				best, bestLen = i+1, n
			}
			continue
		}
		if !l.code[i] {
			continue
		}
		eq := keyEnd(l.text[i])
		if eq < 0 {
			continue
		}
		full := append(append([]string(nil), prefix...), splitKey(l.text[i][:eq])...)
		n := commonPrefix(full, keyPath)
		if n == len(full) && n == len(keyPath) {
			return i + 1
		}
		if n == len(full) && n > bestLen { // an inline table holding the key
			best, bestLen = i+1, n
		}
	}
	return best
}

// keyEnd returns the index of the `=` that ends a line's key, or -1.
func keyEnd(ln string) int {
	inQuote := byte(0)
	for i := 0; i < len(ln); i++ {
		c := ln[i]
		switch {
		case inQuote != 0:
			if c == inQuote {
				inQuote = 0
			}
		case c == '"' || c == '\'':
			inQuote = c
		case c == '=':
			return i
		case c == '#' || c == '[' || c == '{':
			return -1
		}
	}
	return -1
}

// splitKey splits a dotted TOML key, unquoting its parts.
func splitKey(s string) []string {
	var parts []string
	var cur strings.Builder
	inQuote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote != 0:
			if c == inQuote {
				inQuote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '"' || c == '\'':
			inQuote = c
		case c == '.':
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		case c == ' ' || c == '\t':
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, strings.TrimSpace(cur.String()))
}

func commonPrefix(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// tableLine returns the 1-based line of the first table header under the
// top-level key k ([k], [k.x], [[k.y]]), 0 when there is none: the line of
// a table only its sub-tables define, which toml.MetaData does not keep.
func (l *lines) tableLine(k string) int {
	for i := range l.text {
		if parts, _, ok := l.header(i); ok && len(parts) > 0 && parts[0] == k {
			return i + 1
		}
	}
	return 0
}
