package scheme

import "strings"

// A piece is a chunk of generated Lua text that remembers the source line it
// came from, or a nested block of statements. Fennel calls these chunks.
type piece struct {
	line, col int    // source position of the form that made the text; 0: continue where the output is
	text      string // never holds a newline
	blk       *block // a nested block, when text is ""
}

// code is a Lua expression or statement as a sequence of pieces.
type code []piece

// block is a sequence of Lua statements.
type block struct {
	stmts []code
	temps int // temporaries declared directly in this block
}

func (b *block) add(c code) { b.stmts = append(b.stmts, c) }

// at starts code on the line of form f.
func at(f *Form, text string) code {
	if f == nil {
		return code{{text: text}}
	}
	return code{{line: f.Line, col: f.Col, text: text}}
}

// txt continues code on the current line.
func txt(text string) code { return code{{text: text}} }

// blk embeds a block of statements in code.
func blk(b *block) code { return code{{blk: b}} }

// cat joins pieces of code.
func cat(parts ...code) code {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make(code, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// join joins codes with a separator.
func join(cs []code, sep string) code {
	var out code
	for i, c := range cs {
		if i > 0 {
			out = append(out, piece{text: sep})
		}
		out = append(out, c...)
	}
	return out
}

// firstText is the first text of c, looking into nested blocks.
func firstText(c code) (piece, bool) {
	for _, p := range c {
		if p.blk != nil {
			for _, s := range p.blk.stmts {
				if t, ok := firstText(s); ok {
					return t, true
				}
			}
			continue
		}
		if p.text != "" {
			return p, true
		}
	}
	return piece{}, false
}

// render joins the statements of b into Lua source, keeping line alignment:
// a piece that belongs to source line L starts output line L (indented to its
// source column) unless the output has already passed L, in which case it
// follows on the current line. Statements sharing a line are separated by
// "; ", and a statement that starts with '(' always gets a ';' before it so
// Lua cannot read it as a call of the previous one.
func render(b *block) string {
	w := &writer{line: 1}
	w.block(b)
	w.trim()
	if len(w.buf) > 0 {
		w.buf = append(w.buf, '\n')
	}
	return string(w.buf)
}

type writer struct {
	buf       []byte
	line      int
	lineStart bool // nothing but indentation written on this line
}

func (w *writer) trim() {
	for len(w.buf) > 0 && w.buf[len(w.buf)-1] == ' ' {
		w.buf = w.buf[:len(w.buf)-1]
	}
}

func (w *writer) block(b *block) {
	for i, s := range b.stmts {
		if i > 0 {
			first, _ := firstText(s)
			newLine := first.line > w.line
			if strings.HasPrefix(first.text, "(") || !newLine {
				w.buf = append(w.buf, "; "...)
			}
		}
		w.code(s)
	}
}

func (w *writer) code(c code) {
	for _, p := range c {
		if p.blk != nil {
			w.block(p.blk)
			continue
		}
		w.text(p)
	}
}

func (w *writer) text(p piece) {
	if p.text == "" {
		return
	}
	t := p.text
	if p.line > w.line {
		w.trim()
		for w.line < p.line {
			w.buf = append(w.buf, '\n')
			w.line++
		}
		if p.col > 1 {
			w.buf = append(w.buf, strings.Repeat(" ", p.col-1)...)
		}
		w.lineStart = true
	}
	if t[0] == ' ' && (w.lineStart || len(w.buf) > 0 && w.buf[len(w.buf)-1] == ' ') {
		t = strings.TrimLeft(t, " ")
		if t == "" {
			return
		}
	}
	w.buf = append(w.buf, t...)
	w.lineStart = false
}
