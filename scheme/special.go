package scheme

import (
	"sort"
	"strings"
)

// A special lowers one special form. It receives the whole form (head
// included) and follows the contract of compiler.compile.
type special func(c *compiler, f *Form, b *block, d dest) expr

// specials maps the head symbol of each special form to its lowering. It is
// filled once by init and only read afterwards.
var specials map[string]special

func init() {
	specials = map[string]special{
		"quote":  quoteForm,
		"define": defineForm,
		"lambda": lambdaForm,
		"let":    letForm,
		"let*":   letStarForm,
		"if":     ifForm,
		"cond":   condForm,
		"when":   whenForm,
		"unless": whenForm,
		"begin":  beginForm,
		"set!":   setForm,
		"and":    andOrForm,
		"or":     andOrForm,
		"not":    notForm,
		"else":   elseForm,

		"list":  listForm,
		"table": tableForm,
		"get":   getForm,
		"put!":  putForm,

		"+": arithForm, "-": arithForm, "*": arithForm, "/": arithForm,
		"=": compareForm, "<": compareForm, ">": compareForm, "<=": compareForm, ">=": compareForm,

		"string-append": stringAppendForm,
		"length":        helperForm,
		"null?":         helperForm,
		"map":           helperForm,
		"filter":        helperForm,
		"fold":          helperForm,
	}
}

func headOf(f *Form) string { return f.Items[0].Text }

// ---- names and bindings

// bindable checks that p can be bound by form and returns its Lua name.
func (c *compiler) bindable(p *Form, form string) string {
	if p.Kind != Symbol {
		c.errorf(p, form, "%s is not a name; bind a name such as x or task-id", p)
	}
	if p.Text == "nil" {
		c.errorf(p, form, "nil cannot be bound; choose another name")
	}
	if _, ok := specials[p.Text]; ok {
		c.errorf(p, form, "%s is a special form and cannot be bound; choose another name", p.Text)
	}
	if len(segments(p.Text)) > 1 {
		c.errorf(p, form, "%s is a field path; bind a plain name (without / or .)", p.Text)
	}
	return varName(p.Text)
}

// lvalue checks that t can be assigned by form and returns its Lua lvalue.
func (c *compiler) lvalue(t *Form, form string) string {
	if t.Kind != Symbol {
		c.errorf(t, form, "%s is not a name; write a name such as x or state.count", t)
	}
	if t.Text == "nil" {
		c.errorf(t, form, "nil cannot be assigned; choose another name")
	}
	if _, ok := specials[t.Text]; ok {
		c.errorf(t, form, "%s is a special form and cannot be assigned; choose another name", t.Text)
	}
	path, _ := luaPath(t.Text)
	return path
}

// params checks a parameter list and returns the Lua names.
func (c *compiler) params(ps *Form, form string) []string {
	if ps.Kind != List {
		c.errorf(ps, form, "parameters are a list of names, as in (lambda (x y) BODY...)")
	}
	var names []string
	for _, p := range ps.Items {
		if p.Kind == Symbol && p.Text == "." {
			c.errorf(p, form, "rest parameters (a . rest) are not supported; pass a list instead")
		}
		n := c.bindable(p, form)
		if contains(names, n) {
			c.errorf(p, form, "parameter %s appears twice", p.Text)
		}
		names = append(names, n)
	}
	return names
}

// bindings checks ((NAME VALUE) ...) and returns the Lua names and the value forms.
func (c *compiler) bindings(bs *Form, form string, unique bool) ([]string, []*Form) {
	if bs.Kind != List {
		c.errorf(bs, form, "bindings are a list of (NAME VALUE) lists: (%s ((x 1) (y 2)) BODY...)", form)
	}
	var names []string
	var inits []*Form
	for _, bd := range bs.Items {
		if bd.Kind != List || len(bd.Items) != 2 {
			c.errorf(bd, form, "each binding is (NAME VALUE), as in (%s ((x 1)) BODY...); got %s", form, bd)
		}
		n := c.bindable(bd.Items[0], form)
		if unique && contains(names, n) {
			c.errorf(bd.Items[0], form, "%s is bound twice; use let* to bind in sequence", bd.Items[0].Text)
		}
		names = append(names, n)
		inits = append(inits, bd.Items[1])
	}
	return names, inits
}

// function lowers a lambda's parameters and body to a Lua function.
func (c *compiler) function(f *Form, form string, ps *Form, body []*Form) expr {
	names := c.params(ps, form)
	fb := &block{}
	c.body(f, body, fb, dest{kind: toReturn})
	cc := cat(at(f, "function("+strings.Join(names, ", ")+") "), blk(fb), txt(" end"))
	return expr{c: cc, kind: exConst, truthy: true}
}

// shadows reports whether assigning to d.target from inside a scope that
// binds names would hit one of them instead.
func shadows(d dest, names []string) bool {
	return d.kind == toAssign && contains(names, baseName(d.target))
}

// ---- core forms

func quoteForm(c *compiler, f *Form, b *block, d dest) expr {
	if len(f.Items) != 2 {
		c.errorf(f, "quote", "takes one form: (quote x), or 'x")
	}
	return c.deliver(f, b, d, c.datum(f.Items[1]))
}

// datum lowers quoted data: a symbol is its name as a string, a list is a
// list of its quoted items.
func (c *compiler) datum(f *Form) expr {
	switch f.Kind {
	case Symbol:
		s := f.Text
		return expr{c: at(f, luaString(s)), kind: exConst, truthy: true, str: &s}
	case List:
		if len(f.Items) == 0 {
			return emptyList(f)
		}
		var items []code
		for _, it := range f.Items {
			items = append(items, c.datum(it).c)
		}
		return expr{c: cat(at(f, "{"), join(items, ", "), txt("}")), kind: exOther, truthy: true}
	}
	return c.literal(f)
}

func defineForm(c *compiler, f *Form, b *block, d dest) expr {
	const form = "define"
	if !d.body || d.kind == toExpr {
		c.errorf(f, form, "only at the top level or directly in a body (of lambda, let, let*, begin, when, unless or a cond clause); to change a variable use (set! NAME VALUE)")
	}
	if len(f.Items) < 2 {
		c.errorf(f, form, "needs a name and a value: (define NAME VALUE) or (define (NAME ARGS...) BODY...)")
	}
	t := f.Items[1]
	switch t.Kind {
	case Symbol:
		if len(f.Items) == 2 {
			c.errorf(f, form, "%s needs a value: (define %s VALUE)", t, t)
		}
		if len(f.Items) != 3 {
			c.errorf(f, form, "(define %s VALUE) takes exactly one value; to define a function write (define (%s ARGS...) BODY...)", t, t)
		}
		lv := c.lvalue(t, form)
		c.compile(f.Items[2], b, dest{kind: toAssign, target: lv})
	case List:
		if len(t.Items) == 0 {
			c.errorf(t, form, "the function's name is missing: (define (NAME ARGS...) BODY...)")
		}
		if len(f.Items) < 3 {
			c.errorf(f, form, "%s needs a body: (define %s BODY...)", t, t)
		}
		lv := c.lvalue(t.Items[0], form)
		ps := &Form{Pos: t.Pos, Kind: List, Items: t.Items[1:]}
		fn := c.function(f, form, ps, f.Items[2:])
		b.add(cat(at(f, lv+" = "), fn.c))
	default:
		c.errorf(t, form, "%s is not a name: (define NAME VALUE) or (define (NAME ARGS...) BODY...)", t)
	}
	return c.deliver(f, b, d, nilExpr)
}

func lambdaForm(c *compiler, f *Form, b *block, d dest) expr {
	if len(f.Items) < 3 {
		c.errorf(f, "lambda", "needs parameters and a body: (lambda (x y) BODY...)")
	}
	return c.deliver(f, b, d, c.function(f, "lambda", f.Items[1], f.Items[2:]))
}

func letForm(c *compiler, f *Form, b *block, d dest) expr {
	if len(f.Items) >= 2 && f.Items[1].Kind == Symbol {
		return namedLetForm(c, f, b, d)
	}
	if len(f.Items) < 3 {
		c.errorf(f, "let", "needs bindings and a body: (let ((NAME VALUE) ...) BODY...)")
	}
	names, inits := c.bindings(f.Items[1], "let", true)
	if d.kind == toExpr || shadows(d, names) {
		e := c.viaTemp(f, b, func(td dest) { letForm(c, f, b, td) })
		return c.deliver(f, b, d, e)
	}
	lb := &block{}
	es := c.operands(inits, lb)
	if len(names) > 0 {
		vals := make([]code, len(es))
		for i, e := range es {
			vals[i] = e.c
		}
		lb.add(cat(at(f.Items[1].Items[0], "local "+strings.Join(names, ", ")+" = "), join(vals, ", ")))
	}
	c.body(f, f.Items[2:], lb, d.branch())
	b.add(cat(at(f, "do "), blk(lb), txt(" end")))
	return expr{}
}

func letStarForm(c *compiler, f *Form, b *block, d dest) expr {
	if len(f.Items) < 3 {
		c.errorf(f, "let*", "needs bindings and a body: (let* ((NAME VALUE) ...) BODY...)")
	}
	names, inits := c.bindings(f.Items[1], "let*", false)
	if d.kind == toExpr || shadows(d, names) {
		e := c.viaTemp(f, b, func(td dest) { letStarForm(c, f, b, td) })
		return c.deliver(f, b, d, e)
	}
	lb := &block{}
	for i, init := range inits {
		e := c.expr(init, lb)
		lb.add(cat(at(f.Items[1].Items[i], "local "+names[i]+" = "), e.c))
	}
	c.body(f, f.Items[2:], lb, d.branch())
	b.add(cat(at(f, "do "), blk(lb), txt(" end")))
	return expr{}
}

// namedLetForm lowers (let NAME ((VAR INIT) ...) BODY...): a local function
// NAME of the VARs, called at once with the INITs.
func namedLetForm(c *compiler, f *Form, b *block, d dest) expr {
	if len(f.Items) < 4 {
		c.errorf(f, "let", "a named let needs bindings and a body: (let NAME ((VAR INIT) ...) BODY...)")
	}
	loop := c.bindable(f.Items[1], "let")
	_, inits := c.bindings(f.Items[2], "let", true)
	if d.kind == toExpr || shadows(d, []string{loop}) {
		e := c.viaTemp(f, b, func(td dest) { namedLetForm(c, f, b, td) })
		return c.deliver(f, b, d, e)
	}
	lb := &block{}
	es := c.operands(inits, lb)
	if mentions(inits, varName(f.Items[1].Text)) {
		c.saveAll(f, es, lb)
	}
	lb.add(at(f, "local "+loop))
	ps := &Form{Pos: f.Items[2].Pos, Kind: List}
	for _, bd := range f.Items[2].Items {
		ps.Items = append(ps.Items, bd.Items[0])
	}
	fn := c.function(f, "let", ps, f.Items[3:])
	lb.add(cat(at(f, loop+" = "), fn.c))
	args := make([]code, len(es))
	for i, e := range es {
		args[i] = e.c
	}
	call := expr{c: cat(at(f, loop+"("), join(args, ", "), txt(")")), kind: exCall, prefix: true}
	c.deliver(f, lb, d.branch(), call)
	b.add(cat(at(f, "do "), blk(lb), txt(" end")))
	return expr{}
}

// mentions reports whether any of forms uses a symbol whose Lua variable is name.
func mentions(forms []*Form, name string) bool {
	found := false
	for _, f := range forms {
		f.Walk(func(g *Form) bool {
			if g.Kind == Symbol && varName(g.Text) == name {
				found = true
			}
			return !found
		})
	}
	return found
}

func ifForm(c *compiler, f *Form, b *block, d dest) expr {
	n := len(f.Items)
	if n < 3 || n > 4 {
		c.errorf(f, "if", "takes a test, a then-form and an optional else-form: (if TEST THEN ELSE); use cond for more branches and begin for several forms")
	}
	test := c.expr(f.Items[1], b)
	if d.kind == toExpr {
		tb, eb := &block{}, &block{}
		te := c.expr(f.Items[2], tb)
		ee := nilExpr
		if n == 4 {
			ee = c.expr(f.Items[3], eb)
		}
		if len(tb.stmts) == 0 && len(eb.stmts) == 0 && te.truthy {
			// TEST and THEN or ELSE is exact when THEN is never false or nil.
			return expr{c: paren(cat(test.c, txt(" and "), te.c, txt(" or "), ee.c)), kind: exOther, logic: true}
		}
		t := c.temp(f, b)
		tb.add(c.assign(f.Items[2], tb, t, te))
		if n == 4 {
			eb.add(c.assign(f.Items[3], eb, t, ee))
		} else {
			eb.add(txt(t + " = nil"))
		}
		b.add(cat(at(f, "if "), test.c, txt(" then "), blk(tb), txt(" else "), blk(eb), txt(" end")))
		return nameExpr(t)
	}
	d = d.branch()
	tb, eb := &block{}, &block{}
	c.compile(f.Items[2], tb, d)
	if n == 4 {
		c.compile(f.Items[3], eb, d)
	} else if d.kind == toAssign {
		eb.add(txt(d.target + " = nil"))
	}
	st := cat(at(f, "if "), test.c, txt(" then "), blk(tb))
	if len(eb.stmts) > 0 {
		st = cat(st, txt(" else "), blk(eb))
	}
	b.add(cat(st, txt(" end")))
	return expr{}
}

func isElse(cl *Form) bool {
	return cl.Kind == List && len(cl.Items) > 0 && cl.Items[0].Kind == Symbol && cl.Items[0].Text == "else"
}

func condForm(c *compiler, f *Form, b *block, d dest) expr {
	cls := f.Items[1:]
	if len(cls) == 0 {
		c.errorf(f, "cond", "needs at least one clause: (cond (TEST BODY...) ... (else BODY...))")
	}
	for i, cl := range cls {
		if cl.Kind != List || len(cl.Items) == 0 {
			c.errorf(cl, "cond", "each clause is a list (TEST BODY...); got %s", cl)
		}
		if len(cl.Items) > 1 && cl.Items[1].Kind == Symbol && cl.Items[1].Text == "=>" {
			c.errorf(cl.Items[1], "cond", "(TEST => F) clauses are not supported; bind the test with let and call F yourself")
		}
		if isElse(cl) {
			if i != len(cls)-1 {
				c.errorf(cl, "cond", "else must be the last clause")
			}
			if len(cl.Items) == 1 {
				c.errorf(cl, "cond", "else needs a body: (else BODY...)")
			}
		}
	}
	if d.kind == toExpr {
		return c.viaTemp(f, b, func(td dest) { condForm(c, f, b, td) })
	}
	d = d.branch()
	if isElse(cls[0]) {
		c.scopedBody(cls[0], cls[0].Items[1:], b, d)
		return expr{}
	}
	b.add(cat(c.condChain(cls, b, d), txt(" end")))
	return expr{}
}

// condChain lowers clauses to "if T1 then B1 elseif T2 then B2 else B3"
// (without the closing end); the first test's statements go to b. A later
// test that needs statements opens a nested if in the else branch.
func (c *compiler) condChain(cls []*Form, b *block, d dest) code {
	cl := cls[0]
	test := c.expr(cl.Items[0], b)
	tb := &block{}
	if len(cl.Items) == 1 {
		// (TEST) yields the value of TEST when it is true.
		if test.kind != exConst && test.kind != exName {
			test = c.save(cl, test, b)
		}
		c.deliver(cl, tb, d, test)
	} else {
		c.body(cl, cl.Items[1:], tb, d)
	}
	chain := cat(at(cl, "if "), test.c, txt(" then "), blk(tb))
	rest := cls[1:]
	switch {
	case len(rest) == 0:
		if d.kind == toAssign {
			eb := &block{}
			eb.add(txt(d.target + " = nil"))
			chain = cat(chain, txt(" else "), blk(eb))
		}
		return chain
	case isElse(rest[0]):
		eb := &block{}
		c.body(rest[0], rest[0].Items[1:], eb, d)
		return cat(chain, txt(" else "), blk(eb))
	}
	nb := &block{}
	next := c.condChain(rest, nb, d)
	if len(nb.stmts) == 0 {
		next[0].text = "else" + next[0].text
		return cat(chain, txt(" "), next)
	}
	nb.add(cat(next, txt(" end")))
	return cat(chain, txt(" else "), blk(nb))
}

func whenForm(c *compiler, f *Form, b *block, d dest) expr {
	name := headOf(f)
	if len(f.Items) < 3 {
		c.errorf(f, name, "needs a test and a body: (%s TEST BODY...)", name)
	}
	if d.kind == toExpr {
		return c.viaTemp(f, b, func(td dest) { whenForm(c, f, b, td) })
	}
	d = d.branch()
	test := c.expr(f.Items[1], b)
	cond := test.c
	if name == "unless" {
		cond = cat(txt("not "), test.c)
	}
	tb := &block{}
	c.body(f, f.Items[2:], tb, d)
	st := cat(at(f, "if "), cond, txt(" then "), blk(tb))
	if d.kind == toAssign {
		eb := &block{}
		eb.add(txt(d.target + " = nil"))
		st = cat(st, txt(" else "), blk(eb))
	}
	b.add(cat(st, txt(" end")))
	return expr{}
}

func beginForm(c *compiler, f *Form, b *block, d dest) expr {
	forms := f.Items[1:]
	if len(forms) == 0 {
		return c.deliver(f, b, d, nilExpr)
	}
	if d.body && d.kind != toExpr {
		// Directly in a body: the forms belong to that body.
		c.seq(forms, b, d)
		return expr{}
	}
	if len(definedNames(forms)) > 0 {
		if d.kind == toExpr {
			return c.viaTemp(f, b, func(td dest) { c.scopedBody(f, forms, b, td) })
		}
		c.scopedBody(f, forms, b, d.branch())
		return expr{}
	}
	for _, g := range forms[:len(forms)-1] {
		c.stmtInto(g, b, dest{kind: toStmt, body: true})
	}
	return c.compile(forms[len(forms)-1], b, d.branch())
}

func setForm(c *compiler, f *Form, b *block, d dest) expr {
	if len(f.Items) != 3 {
		c.errorf(f, "set!", "takes a name and a value: (set! NAME VALUE)")
	}
	lv := c.lvalue(f.Items[1], "set!")
	c.compile(f.Items[2], b, dest{kind: toAssign, target: lv})
	return c.deliver(f, b, d, nilExpr)
}

func andOrForm(c *compiler, f *Form, b *block, d dest) expr {
	op := headOf(f)
	args := f.Items[1:]
	switch {
	case len(args) == 0:
		v := expr{c: at(f, "true"), kind: exConst, truthy: true}
		if op == "or" {
			v = expr{c: at(f, "false"), kind: exConst}
		}
		return c.deliver(f, b, d, v)
	case len(args) == 1:
		return c.compile(args[0], b, d.branch())
	case d.kind == toStmt:
		c.andOrStmt(op, args, b)
		return expr{}
	case d.kind != toExpr:
		return c.deliver(f, b, d, andOrForm(c, f, b, exprDest))
	}
	first := c.expr(args[0], b)
	es := []expr{first}
	subs := []*block{nil}
	inline := true
	for _, a := range args[1:] {
		sb := &block{}
		es = append(es, c.expr(a, sb))
		subs = append(subs, sb)
		inline = inline && len(sb.stmts) == 0
	}
	if inline {
		parts := make([]code, len(es))
		for i, e := range es {
			parts[i] = e.c
		}
		return expr{c: paren(join(parts, " "+op+" ")), kind: exOther, logic: true}
	}
	// Later operands need statements: evaluate into a temporary, one
	// operand at a time, while the result decides.
	t := c.tempName()
	b.temps++
	b.add(cat(at(f, "local "+t+" = "), first.c))
	test := t
	if op == "or" {
		test = "not " + t
	}
	var inner code
	for i := len(args) - 1; i >= 1; i-- {
		sb := subs[i]
		sb.add(c.assign(args[i], sb, t, es[i]))
		if inner != nil {
			sb.add(inner)
		}
		inner = cat(at(args[i], "if "+test+" then "), blk(sb), txt(" end"))
	}
	b.add(inner)
	return nameExpr(t)
}

// andOrStmt lowers and/or for effect: (and a b) is if a then b end.
func (c *compiler) andOrStmt(op string, args []*Form, b *block) {
	e := c.expr(args[0], b)
	if len(args) == 1 {
		c.deliver(args[0], b, dest{kind: toStmt}, e)
		return
	}
	sb := &block{}
	c.andOrStmt(op, args[1:], sb)
	test := e.c
	if op == "or" {
		test = cat(txt("not "), e.c)
	}
	b.add(cat(at(args[0], "if "), test, txt(" then "), blk(sb), txt(" end")))
}

func notForm(c *compiler, f *Form, b *block, d dest) expr {
	if len(f.Items) != 2 {
		c.errorf(f, "not", "takes one value: (not X)")
	}
	e := c.expr(f.Items[1], b)
	return c.deliver(f, b, d, expr{c: cat(at(f, "(not "), e.c, txt(")")), kind: exOther})
}

func elseForm(c *compiler, f *Form, b *block, d dest) expr {
	c.errorf(f, "else", "only as the test of the last clause of cond: (cond ... (else BODY...))")
	return expr{}
}

// ---- data

func listForm(c *compiler, f *Form, b *block, d dest) expr {
	args := f.Items[1:]
	if len(args) == 0 {
		// An empty table would not say it is a list; the engine's list()
		// returns one marked as a list.
		return c.deliver(f, b, d, emptyList(f))
	}
	es := c.operands(args, b)
	items := make([]code, len(es))
	kind := exConst
	for i, e := range es {
		items[i] = e.c
		if i == len(es)-1 {
			items[i] = single(e)
		}
		if e.kind != exConst {
			kind = exOther
		}
	}
	return c.deliver(f, b, d, expr{c: cat(at(f, "{"), join(items, ", "), txt("}")), kind: kind, truthy: true})
}

func tableForm(c *compiler, f *Form, b *block, d dest) expr {
	args := f.Items[1:]
	if len(args)%2 != 0 {
		k := args[len(args)-1]
		c.errorf(k, "table", "%s has no value; write (table KEY VALUE ...), as in (table :name \"x\")", k)
	}
	es := c.operands(args, b)
	kind := exConst
	var fields []code
	for i := 0; i < len(es); i += 2 {
		k, v := es[i], es[i+1]
		var key code
		if k.str != nil {
			key = txt(tableKey(*k.str))
		} else {
			key = cat(txt("["), k.c, txt("] = "))
		}
		fields = append(fields, cat(key, v.c))
		if k.kind != exConst || v.kind != exConst {
			kind = exOther
		}
	}
	return c.deliver(f, b, d, expr{c: cat(at(f, "{"), join(fields, ", "), txt("}")), kind: kind, truthy: true})
}

// index lowers t[k], as t.k when k is a constant identifier string.
func index(t, k expr) code {
	if k.str != nil && isIdent(*k.str) {
		return cat(asPrefix(t), txt("."+*k.str))
	}
	return cat(asPrefix(t), txt("["), k.c, txt("]"))
}

func getForm(c *compiler, f *Form, b *block, d dest) expr {
	if len(f.Items) != 3 {
		c.errorf(f, "get", "takes a table and a key: (get TABLE KEY), as in (get call :args)")
	}
	es := c.operands(f.Items[1:], b)
	return c.deliver(f, b, d, expr{c: index(es[0], es[1]), kind: exName, prefix: true})
}

// putForm lowers (put! t k v) to t[k] = v; as a value it yields t.
func putForm(c *compiler, f *Form, b *block, d dest) expr {
	if len(f.Items) != 4 {
		c.errorf(f, "put!", "takes a table, a key and a value: (put! TABLE KEY VALUE)")
	}
	es := c.operands(f.Items[1:], b)
	t := es[0]
	if d.kind != toStmt && t.kind != exName {
		t = c.save(f, t, b)
	}
	b.add(cat(place(f, index(t, es[1])), txt(" = "), es[2].c))
	return c.deliver(f, b, d, t)
}

// ---- operators

func arithForm(c *compiler, f *Form, b *block, d dest) expr {
	op := headOf(f)
	args := f.Items[1:]
	if len(args) == 0 {
		switch op {
		case "+":
			return c.deliver(f, b, d, expr{c: at(f, "0"), kind: exConst, truthy: true})
		case "*":
			return c.deliver(f, b, d, expr{c: at(f, "1"), kind: exConst, truthy: true})
		}
		c.errorf(f, op, "needs at least one number: (%s X Y ...)", op)
	}
	es := c.operands(args, b)
	if len(es) == 1 {
		switch op {
		case "-":
			return c.deliver(f, b, d, expr{c: cat(at(f, "(- "), es[0].c, txt(")")), kind: exOther, truthy: true})
		case "/":
			return c.deliver(f, b, d, expr{c: cat(at(f, "(1 / "), es[0].c, txt(")")), kind: exOther, truthy: true})
		}
		return c.deliver(f, b, d, es[0])
	}
	parts := make([]code, len(es))
	for i, e := range es {
		parts[i] = e.c
	}
	return c.deliver(f, b, d, expr{c: cat(at(f, "("), join(parts, " "+op+" "), txt(")")), kind: exOther, truthy: true})
}

func compareForm(c *compiler, f *Form, b *block, d dest) expr {
	op := headOf(f)
	args := f.Items[1:]
	if len(args) < 2 {
		c.errorf(f, op, "needs at least two values to compare: (%s A B)", op)
	}
	lop := op
	if op == "=" {
		lop = "=="
	}
	es := c.operands(args, b)
	for _, e := range es[1 : len(es)-1] {
		if e.kind == exCall || e.kind == exOther {
			// A middle operand is compared twice: evaluate each once.
			c.saveAll(f, es, b)
			break
		}
	}
	parts := make([]code, len(es)-1)
	for i := range parts {
		parts[i] = cat(es[i].c, txt(" "+lop+" "), es[i+1].c)
	}
	return c.deliver(f, b, d, expr{c: cat(at(f, "("), join(parts, " and "), txt(")")), kind: exOther, logic: len(parts) > 1})
}

func stringAppendForm(c *compiler, f *Form, b *block, d dest) expr {
	args := f.Items[1:]
	if len(args) == 0 {
		s := ""
		return c.deliver(f, b, d, expr{c: at(f, `""`), kind: exConst, truthy: true, str: &s})
	}
	es := c.operands(args, b)
	if len(es) == 1 {
		return c.deliver(f, b, d, es[0])
	}
	parts := make([]code, len(es))
	for i, e := range es {
		parts[i] = e.c
	}
	return c.deliver(f, b, d, expr{c: cat(at(f, "("), join(parts, " .. "), txt(")")), kind: exOther, truthy: true})
}

// helperSigs are the arity and usage of each form backed by a runtime
// helper. These forms may also be passed as values, as in (map length xs).
var helperSigs = map[string]struct {
	arity int
	usage string
}{
	"map":    {2, "(map FUNCTION LIST)"},
	"filter": {2, "(filter PREDICATE LIST)"},
	"fold":   {3, "(fold FUNCTION INIT LIST), which calls (FUNCTION item acc)"},
	"null?":  {1, "(null? X)"},
	"length": {1, "(length LIST-OR-STRING)"},
}

func helperForm(c *compiler, f *Form, b *block, d dest) expr {
	name := headOf(f)
	sig := helperSigs[name]
	if len(f.Items)-1 != sig.arity {
		c.errorf(f, name, "takes %d argument(s): %s", sig.arity, sig.usage)
	}
	h := c.helper(name)
	es := c.operands(f.Items[1:], b)
	args := make([]code, len(es))
	for i, e := range es {
		args[i] = e.c
		if i == len(es)-1 {
			args[i] = single(e)
		}
	}
	return c.deliver(f, b, d, expr{c: cat(at(f, h+"("), join(args, ", "), txt(")")), kind: exCall, prefix: true, noTail: true})
}

// FormNames are the heads the forms handle themselves (special forms and
// the helper-backed forms), sorted: the names a program in the forms may
// have meant when it calls one that is not defined.
func FormNames() []string {
	out := make([]string, 0, len(specials))
	for name := range specials {
		if name != "else" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
