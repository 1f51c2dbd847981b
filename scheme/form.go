package scheme

import (
	"fmt"
	"strconv"
	"strings"
)

// Pos is a position in a source file. Line and Col are 1-based; Col counts
// characters (runes), not bytes.
type Pos struct {
	File string
	Line int
	Col  int
}

// String formats the position as FILE:LINE:COL.
func (p Pos) String() string {
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Kind says what a Form is.
type Kind int

// The kinds of forms.
const (
	List    Kind = iota + 1 // ( ... ); Items holds the elements
	Symbol                  // a name; Text holds it
	Keyword                 // :name; Text holds the name without the colon
	String                  // "..."; Text holds the decoded value
	Number                  // 42, -1.5; Text holds the literal as written, Num its value
	Bool                    // #t or #f; Bool holds the value
)

func (k Kind) String() string {
	switch k {
	case List:
		return "list"
	case Symbol:
		return "symbol"
	case Keyword:
		return "keyword"
	case String:
		return "string"
	case Number:
		return "number"
	case Bool:
		return "boolean"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Form is one datum read from source, stamped with the position of its first
// character. A quote 'x is read as the list (quote x), positioned at the quote.
// Forms are plain data: Read returns new ones on every call and nothing in
// this package changes them, so goroutines may share forms they only read.
type Form struct {
	Pos
	Kind  Kind
	Text  string  // Symbol and Keyword names, the String value, the Number literal
	Num   float64 // Number
	Bool  bool    // Bool
	Items []*Form // List
}

// IsInteger reports whether f is a Number written without a fraction or exponent.
func (f *Form) IsInteger() bool {
	return f.Kind == Number && !strings.ContainsAny(f.Text, ".eE")
}

// Head returns the symbol name at the head of a list form, or "".
func (f *Form) Head() string {
	if f.Kind == List && len(f.Items) > 0 && f.Items[0].Kind == Symbol {
		return f.Items[0].Text
	}
	return ""
}

// Walk calls fn for f and, while fn returns true, for every form inside it,
// depth first in source order.
func (f *Form) Walk(fn func(*Form) bool) {
	if !fn(f) {
		return
	}
	for _, it := range f.Items {
		it.Walk(fn)
	}
}

// String prints the form back in Scheme syntax (comments and layout are lost).
func (f *Form) String() string {
	var b strings.Builder
	f.write(&b)
	return b.String()
}

func (f *Form) write(b *strings.Builder) {
	switch f.Kind {
	case List:
		b.WriteByte('(')
		for i, it := range f.Items {
			if i > 0 {
				b.WriteByte(' ')
			}
			it.write(b)
		}
		b.WriteByte(')')
	case Symbol, Number:
		b.WriteString(f.Text)
	case Keyword:
		b.WriteByte(':')
		b.WriteString(f.Text)
	case String:
		b.WriteString(schemeQuote(f.Text))
	case Bool:
		if f.Bool {
			b.WriteString("#t")
		} else {
			b.WriteString("#f")
		}
	}
}

// schemeQuote quotes s with the escapes the reader understands.
func schemeQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\x%x;`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
