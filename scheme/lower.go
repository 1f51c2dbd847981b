package scheme

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Lower translates the Scheme-style source src of the file named file into
// Lua 5.1 source that is line-aligned with it (see the package comment). The
// result only uses the base, string, table and math libraries and the engine's
// globals. Errors are *Error values. Lower returns Lua text and compiles
// nothing: the engine compiles it (luabind.Compile) under the file's name,
// so a failure to compile the lowered program (a function too big for
// Lua's limits) is a luabind.SyntaxError at the .scm line. Lower is safe
// for concurrent use.
func Lower(file string, src []byte) (string, error) {
	return lower(file, src)
}

// LowerFile reads the file at path and lowers it, naming it path in errors.
// It is what `attune lower FILE.scm` prints.
func LowerFile(path string) (string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return Lower(path, src)
}

// maxTopLocals is the most top-level names declared as locals; a program
// that defines more uses globals of its registry's state instead, because a
// Lua function holds at most 200 locals.
const maxTopLocals = 150

// bailout carries a translator error up to lower.
type bailout struct{ err *Error }

func lower(file string, src []byte) (out string, err error) {
	forms, err := Read(file, src)
	if err != nil {
		return "", err
	}
	c := &compiler{taken: map[string]bool{}, helpers: map[string]string{}}
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			out, err = "", b.err
		}
	}()
	c.scan(forms)
	top := &block{}
	c.seq(forms, top, dest{kind: toStmt, body: true})

	// Line 1 opens with the runtime helpers the program uses and the
	// declaration of its top-level names, so that every top-level function
	// can refer to every other.
	line1 := &Form{Pos: Pos{File: file, Line: 1, Col: 1}}
	var prelude []code
	for _, h := range helperOrder {
		if name, ok := c.helpers[h]; ok {
			prelude = append(prelude, at(line1, helperSource(h, name)))
		}
	}
	if names := definedNames(forms); len(names) > 0 && len(names) <= maxTopLocals {
		prelude = append(prelude, at(line1, "local "+strings.Join(names, ", ")))
	}
	top.stmts = append(prelude, top.stmts...)
	return render(top), nil
}

// compiler holds the state of one Lower call.
type compiler struct {
	taken   map[string]bool   // Lua names the program uses or the compiler made
	helpers map[string]string // runtime helpers used, by Scheme name, to their local names
	n       int
}

// errorf stops lowering with an error at f about the form named form.
func (c *compiler) errorf(f *Form, form string, format string, args ...any) {
	panic(bailout{&Error{Pos: f.Pos, Form: form, Msg: fmt.Sprintf(format, args...)}})
}

// scan records every Lua name the program's symbols become, so that
// temporaries never capture one, and rejects two symbols that would become
// the same Lua name.
func (c *compiler) scan(forms []*Form) {
	seen := map[string]*Form{}
	var walk func(f *Form)
	walk = func(f *Form) {
		switch f.Kind {
		case Symbol:
			if _, ok := specials[f.Text]; ok || f.Text == "nil" {
				return
			}
			seg := segments(f.Text)[0]
			v := mangleVar(seg)
			c.taken[v] = true
			if prev, ok := seen[v]; ok && segments(prev.Text)[0] != seg {
				c.errorf(f, "", "%s and %s (at %d:%d) both become the Lua name %s; rename one of them",
					seg, segments(prev.Text)[0], prev.Line, prev.Col, v)
			}
			seen[v] = f
		case List:
			if f.Head() == "quote" {
				return
			}
			for _, it := range f.Items {
				walk(it)
			}
		}
	}
	for _, f := range forms {
		walk(f)
	}
}

// fresh returns a Lua name starting with base that the program does not use.
func (c *compiler) fresh(base string) string {
	name := base
	for c.taken[name] {
		c.n++
		name = base + strconv.Itoa(c.n)
	}
	c.taken[name] = true
	return name
}

// tempName makes a new name for a temporary: _1, _2, ...
func (c *compiler) tempName() string {
	for {
		c.n++
		name := "_" + strconv.Itoa(c.n)
		if !c.taken[name] {
			c.taken[name] = true
			return name
		}
	}
}

// temp declares a new temporary in b.
func (c *compiler) temp(f *Form, b *block) string {
	name := c.tempName()
	b.add(at(f, "local "+name))
	b.temps++
	return name
}

// helper returns the local name of a runtime helper, marking it used.
func (c *compiler) helper(name string) string {
	if h, ok := c.helpers[name]; ok {
		return h
	}
	h := c.fresh("_" + mangleVar(name))
	c.helpers[name] = h
	return h
}

// destKind says where the value of a form goes.
type destKind int

const (
	toExpr   destKind = iota // return it as a Lua expression
	toStmt                   // discard it: compile for effect
	toReturn                 // return it from the enclosing function
	toAssign                 // assign it to dest.target
)

type dest struct {
	kind   destKind
	target string // toAssign: a Lua lvalue
	body   bool   // the form sits directly in a body, where define is allowed
}

var exprDest = dest{kind: toExpr}

// branch is d for a form that is not directly in a body.
func (d dest) branch() dest { d.body = false; return d }

// expr is a compiled Lua expression.
type expr struct {
	c      code
	kind   exprKind
	prefix bool // a Lua prefixexp: may be called or indexed as it is
	truthy bool // known to be neither nil nor false
	str    *string
	noTail bool // a helper call: never a tail call, so errors it raises at level 3 find their caller
	logic  bool // an and/or expression: see assign
}

type exprKind int

const (
	exConst exprKind = iota // a literal or a function: no effect, same value whenever evaluated
	exName                  // a variable or field: no effect, but its value may change
	exCall                  // a function call: may stand as a statement
	exOther                 // any other expression
)

var nilExpr = expr{c: txt("nil"), kind: exConst}

func nameExpr(name string) expr {
	return expr{c: txt(name), kind: exName, prefix: true}
}

// asPrefix wraps e in parentheses unless it can be called or indexed as it is.
func asPrefix(e expr) code {
	if e.prefix {
		return e.c
	}
	return paren(e.c)
}

// single keeps one value of a call that ends an argument or element list.
func single(e expr) code {
	if e.kind == exCall {
		return paren(e.c)
	}
	return e.c
}

// paren wraps c in parentheses that start on c's line.
func paren(c code) code {
	return cat(lead(c, "("), c, txt(")"))
}

// place puts code that has no position yet on the line of f.
func place(f *Form, c code) code {
	if len(c) == 0 || c[0].line > 0 || c[0].blk != nil {
		return c
	}
	out := append(code{}, c...)
	out[0].line, out[0].col = f.Line, f.Col
	return out
}

// lead is text placed where code c starts.
func lead(c code, text string) code {
	if p, ok := firstText(c); ok {
		return code{{line: p.line, col: p.col, text: text}}
	}
	return txt(text)
}

// compile is the one dispatch point: it lowers form f, adding the statements
// it needs to b, and delivers its value as d asks. For toExpr it returns the
// expression; otherwise the returned expr is empty.
func (c *compiler) compile(f *Form, b *block, d dest) expr {
	switch f.Kind {
	case List:
		if len(f.Items) == 0 {
			return c.deliver(f, b, d, emptyList(f))
		}
		if h := f.Items[0]; h.Kind == Symbol {
			if sp, ok := specials[h.Text]; ok {
				return sp(c, f, b, d)
			}
		}
		return c.call(f, b, d)
	case Symbol:
		return c.deliver(f, b, d, c.symbol(f))
	default:
		return c.deliver(f, b, d, c.literal(f))
	}
}

// expr compiles f for its value.
func (c *compiler) expr(f *Form, b *block) expr { return c.compile(f, b, exprDest) }

func emptyList(f *Form) expr {
	return expr{c: at(f, "list()"), kind: exCall, prefix: true, truthy: true}
}

// literal lowers a string, number, boolean or keyword.
func (c *compiler) literal(f *Form) expr {
	switch f.Kind {
	case String:
		s := f.Text
		return expr{c: at(f, luaString(s)), kind: exConst, truthy: true, str: &s}
	case Keyword:
		s := keyName(f.Text)
		return expr{c: at(f, luaString(s)), kind: exConst, truthy: true, str: &s}
	case Number:
		return expr{c: at(f, luaNumber(f)), kind: exConst, truthy: true}
	case Bool:
		if f.Bool {
			return expr{c: at(f, "true"), kind: exConst, truthy: true}
		}
		return expr{c: at(f, "false"), kind: exConst}
	}
	panic("scheme: literal of kind " + f.Kind.String())
}

// luaNumber writes a number so that Lua reads the same value.
func luaNumber(f *Form) string {
	if f.IsInteger() && f.Num == float64(int64(f.Num)) && f.Num > -1e15 && f.Num < 1e15 {
		return strconv.FormatInt(int64(f.Num), 10)
	}
	return strconv.FormatFloat(f.Num, 'g', -1, 64)
}

// symbol lowers a symbol used as a value.
func (c *compiler) symbol(f *Form) expr {
	name := f.Text
	if name == "nil" {
		return expr{c: at(f, "nil"), kind: exConst}
	}
	if _, ok := specials[name]; ok {
		if _, ok := helperSigs[name]; ok {
			return expr{c: at(f, c.helper(name)), kind: exName, prefix: true}
		}
		if name == "else" {
			c.errorf(f, "else", "only as the test of the last clause of cond: (cond ... (else BODY...))")
		}
		c.errorf(f, name, "a special form cannot be passed as a value; wrap it in a lambda, as in (lambda (a b) (%s a b))", name)
	}
	path, _ := luaPath(name)
	return expr{c: at(f, path), kind: exName, prefix: true}
}

// deliver sends the value e of form f where d says.
func (c *compiler) deliver(f *Form, b *block, d dest, e expr) expr {
	switch d.kind {
	case toExpr:
		return e
	case toStmt:
		switch e.kind {
		case exCall:
			b.add(e.c)
		case exOther:
			b.add(cat(at(f, "do local _ = "), e.c, txt(" end")))
		}
	case toReturn:
		if e.noTail {
			e.c = paren(e.c)
		}
		b.add(cat(at(f, "return "), e.c))
	case toAssign:
		b.add(c.assign(f, b, d.target, e))
	}
	return expr{}
}

// assign returns the statement target = e. gopher-lua v1.1.2 miscompiles
// an and/or expression assigned to a local that already exists: when an
// operand that is a call comes out false or nil, the local keeps its old
// value. A new local is compiled correctly, so such a value goes through
// one: local _N = e; target = _N.
func (c *compiler) assign(f *Form, b *block, target string, e expr) code {
	if e.logic && !strings.ContainsAny(target, ".[") {
		t := c.tempName()
		b.temps++
		b.add(cat(lead(e.c, "local "+t+" = "), e.c))
		e = nameExpr(t)
	}
	return cat(at(f, target+" = "), e.c)
}

// viaTemp compiles a statement-shaped form for its value: it declares a
// temporary, lets fill assign to it, and returns the temporary.
func (c *compiler) viaTemp(f *Form, b *block, fill func(d dest)) expr {
	t := c.temp(f, b)
	fill(dest{kind: toAssign, target: t})
	return nameExpr(t)
}

// operands compiles forms left to right for their values. When a form needs
// statements, the earlier operands that are not constants are first saved in
// temporaries, so Lua evaluates everything in source order.
func (c *compiler) operands(forms []*Form, b *block) []expr {
	return c.operandsFrom(forms, b, 0)
}

// operandsFrom is operands where the first keep operands are never saved.
// A call keeps a function named by a symbol: like the other operands, when
// Scheme evaluates the operator is unspecified.
func (c *compiler) operandsFrom(forms []*Form, b *block, keep int) []expr {
	out := make([]expr, len(forms))
	for i, f := range forms {
		mark := len(b.stmts)
		e := c.expr(f, b)
		if len(b.stmts) > mark {
			var saves []code
			for j := keep; j < i; j++ {
				if out[j].kind != exConst {
					t := c.tempName()
					b.temps++
					saves = append(saves, cat(at(forms[j], "local "+t+" = "), out[j].c))
					out[j] = nameExpr(t)
				}
			}
			if len(saves) > 0 {
				rest := append([]code{}, b.stmts[mark:]...)
				b.stmts = append(append(b.stmts[:mark], saves...), rest...)
			}
		}
		out[i] = e
	}
	return out
}

// saveAll saves every non-constant expression of es in a temporary, in order.
func (c *compiler) saveAll(f *Form, es []expr, b *block) {
	for i, e := range es {
		if e.kind != exConst {
			es[i] = c.save(f, e, b)
		}
	}
}

// save evaluates e once into a new temporary.
func (c *compiler) save(f *Form, e expr, b *block) expr {
	t := c.tempName()
	b.temps++
	b.add(cat(at(f, "local "+t+" = "), e.c))
	return nameExpr(t)
}

// stmtInto compiles f into b; a form that needs temporaries gets its own
// do ... end so they do not pile up in the enclosing function.
func (c *compiler) stmtInto(f *Form, b *block, d dest) {
	sb := &block{}
	c.compile(f, sb, d)
	if sb.temps > 0 {
		b.add(cat(at(f, "do "), blk(sb), txt(" end")))
		return
	}
	for _, s := range sb.stmts {
		b.add(indent(f, s))
	}
}

// indent makes code that starts on the line of f start at its column, so
// the Lua of a form is indented like the form.
func indent(f *Form, c code) code {
	if len(c) == 0 || c[0].blk != nil || (c[0].line != 0 && c[0].line != f.Line) {
		return c
	}
	out := append(code{}, c...)
	out[0].line, out[0].col = f.Line, f.Col
	return out
}

// seq compiles a sequence of body forms; the last one delivers to d.
func (c *compiler) seq(forms []*Form, b *block, d dest) {
	for i, f := range forms {
		fd := dest{kind: toStmt, body: true}
		if i == len(forms)-1 {
			fd = d
			fd.body = true
		}
		c.stmtInto(f, b, fd)
	}
}

// body compiles forms as a body in b, which must be a Lua block of its own:
// the names the body defines are declared first, so its functions can refer
// to each other.
func (c *compiler) body(f *Form, forms []*Form, b *block, d dest) {
	names := definedNames(forms)
	if d.kind == toAssign && contains(names, baseName(d.target)) {
		t := c.temp(f, b)
		ib := &block{}
		c.body(f, forms, ib, dest{kind: toAssign, target: t})
		b.add(cat(at(f, "do "), blk(ib), txt(" end")))
		b.add(at(f, d.target+" = "+t))
		return
	}
	if len(names) > 0 {
		b.add(at(forms[0], "local "+strings.Join(names, ", ")))
	}
	c.seq(forms, b, d)
}

// scopedBody compiles a body into b, which may be shared with other code: a
// body that defines names gets its own do ... end.
func (c *compiler) scopedBody(f *Form, forms []*Form, b *block, d dest) {
	if len(definedNames(forms)) == 0 {
		c.seq(forms, b, d)
		return
	}
	if d.kind == toExpr {
		panic("scheme: scopedBody for a value")
	}
	ib := &block{}
	c.body(f, forms, ib, d)
	b.add(cat(at(f, "do "), blk(ib), txt(" end")))
}

// definedNames lists the plain names that define forms directly in a body
// (or in a begin directly in it) bind, in order, once each.
func definedNames(forms []*Form) []string {
	var names []string
	seen := map[string]bool{}
	var walk func(forms []*Form)
	walk = func(forms []*Form) {
		for _, f := range forms {
			switch f.Head() {
			case "begin":
				walk(f.Items[1:])
			case "define":
				if len(f.Items) < 2 {
					continue
				}
				t := f.Items[1]
				if t.Kind == List && len(t.Items) > 0 {
					t = t.Items[0]
				}
				if t.Kind != Symbol || t.Text == "nil" || len(segments(t.Text)) > 1 {
					continue
				}
				if _, ok := specials[t.Text]; ok {
					continue
				}
				if n := varName(t.Text); !seen[n] {
					seen[n] = true
					names = append(names, n)
				}
			}
		}
	}
	walk(forms)
	return names
}

// baseName is the variable at the root of a Lua lvalue.
func baseName(lv string) string {
	if i := strings.IndexAny(lv, ".["); i >= 0 {
		return lv[:i]
	}
	return lv
}

func contains(names []string, n string) bool {
	for _, m := range names {
		if m == n {
			return true
		}
	}
	return false
}

// call lowers a call of a function: positional arguments in order, then one
// table of the :key value pairs.
func (c *compiler) call(f *Form, b *block, d dest) expr {
	head := f.Items[0]
	hname := head.String()
	switch head.Kind {
	case String, Number, Bool, Keyword:
		c.errorf(head, "", "%s is not a function: a call starts with a function, as in (f x)", hname)
	case Symbol:
		if head.Text == "nil" {
			c.errorf(head, "", "nil is not a function: a call starts with a function, as in (f x)")
		}
	case List:
		if len(head.Items) == 0 {
			c.errorf(head, "", "() is not a function: a call starts with a function, as in (f x)")
		}
	}
	if head.Kind == Symbol {
		hname = head.Text
	} else {
		hname = "call"
	}
	forms := []*Form{head}
	var keyAt []int // indexes in forms of keyword values
	var keys []*Form
	args := f.Items[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.Kind == Keyword {
			if i+1 >= len(args) {
				c.errorf(a, hname, ":%s has no value; write :%s VALUE, or '%s for the name as a string", a.Text, a.Text, a.Text)
			}
			keys = append(keys, a)
			keyAt = append(keyAt, len(forms))
			forms = append(forms, args[i+1])
			i++
			continue
		}
		forms = append(forms, a)
	}
	keep := 0
	if head.Kind == Symbol {
		keep = 1
	}
	es := c.operandsFrom(forms, b, keep)
	isKey := map[int]bool{}
	for _, k := range keyAt {
		isKey[k] = true
	}
	// Options move behind the positional arguments; if that would swap two
	// computations, evaluate everything into temporaries first.
	reorder := false
	for _, k := range keyAt {
		if es[k].kind == exConst {
			continue
		}
		for j := k + 1; j < len(es); j++ {
			if !isKey[j] && (es[j].kind == exCall || es[j].kind == exOther) {
				reorder = true
			}
		}
	}
	if reorder {
		c.saveAll(f, es[keep:], b)
	}
	var pos []expr
	for i := 1; i < len(es); i++ {
		if !isKey[i] {
			pos = append(pos, es[i])
		}
	}
	var argc []code
	for i, e := range pos {
		if i == len(pos)-1 && len(keys) == 0 {
			argc = append(argc, single(e))
		} else {
			argc = append(argc, e.c)
		}
	}
	if len(keys) > 0 {
		var fields []code
		for i, k := range keys {
			fields = append(fields, cat(at(k, tableKey(keyName(k.Text))), es[keyAt[i]].c))
		}
		argc = append(argc, cat(lead(fields[0], "{"), join(fields, ", "), txt("}")))
	}
	cc := indent(f, cat(asPrefix(es[0]), txt("("), join(argc, ", "), txt(")")))
	return c.deliver(f, b, d, expr{c: cc, kind: exCall, prefix: true})
}
