package engine

// Observer hears of the registrations programs make and of every time one
// runs: what `attune test --cover` counts. Its methods are called from any
// goroutine, must be safe for concurrent use, must return quickly and must
// not call back into the engine. The tool fast path never calls it (no
// registration runs there).
type Observer interface {
	// Registered: a program's top level made a registration. Each registry
	// that loads the program tells again (once per instance and pin).
	Registered(Registration)
	// Ran: a registration's handler was entered (a guard, a hook's phase,
	// a tool handler, a reducer, a method, a subscription, a validator, a
	// command).
	Ran(Registration)
}

// Registration names one registration of a program.
type Registration struct {
	Program string // the program's name: "tasks", "commands/goal"
	File    string // its file in its pack: "tasks.scm"
	SHA256  string // the pinned source
	// Form is the register form: "guard/tool", "hook/round",
	// "define/method", "validate/configuration" ...
	Form string
	Pos  string // "file:line" of the registration (a .scm program: its .scm line)
	// Pattern is a tool guard's or hook's path pattern (traces only).
	Pattern string
}

func (d *decl) registration() Registration {
	r := d.reg
	return Registration{Program: r.program, File: r.file, SHA256: r.sha, Form: d.form, Pos: d.pos}
}

// ran tells the observer, if any, that d's handler was entered.
func (e *Engine) ran(d *decl) {
	if e.obs != nil && d != nil {
		e.obs.Ran(d.registration())
	}
}

// observeRegistrations names each declaration's form and tells the
// observer, if any, of every registration of a registry just loaded.
// The forms are named whether or not an observer watches: a failure's
// Frames name them too.
func (e *Engine) observeRegistrations(r *registry) {
	var all []*decl
	add := func(d *decl, form string) {
		d.form = form
		if e.obs != nil {
			all = append(all, d)
		}
	}
	for _, d := range r.tools {
		add(&d.decl, "define/tool")
	}
	for _, g := range r.toolGuards {
		add(&g.decl, "guard/tool")
	}
	for _, kind := range []string{"turn", "round"} {
		for _, g := range r.bguards[kind] {
			add(&g.decl, "guard/"+kind)
		}
	}
	for _, h := range r.toolHooks {
		add(&h.decl, "hook/tool")
	}
	for _, h := range r.bhooks {
		form := "hook/turn"
		if len(h.boundary) > 5 && h.boundary[:5] == "round" {
			form = "hook/round"
		}
		add(&h.decl, form)
	}
	for _, d := range r.reducers {
		add(&d.decl, "define/reducer")
	}
	for _, m := range r.methods {
		add(&m.decl, "define/method")
	}
	for _, s := range r.subs {
		add(&s.decl, "subscribe")
	}
	for k := range r.validators {
		add(r.validatorDecl(k), "validate/configuration")
	}
	if r.command != nil {
		add(r.commandDecl(), "define/command")
	}
	for _, d := range all {
		e.obs.Registered(d.registration())
	}
}

// validatorDecl is the registration of validator k (validators have no
// id on the lineage; they never nest).
func (r *registry) validatorDecl(k int) *decl {
	for len(r.vdecls) <= k {
		pos := r.file
		if n := len(r.vdecls); n < len(r.vpos) {
			pos = r.vpos[n]
		}
		r.vdecls = append(r.vdecls, &decl{id: r.id + ".validate", reg: r, pos: pos, form: "validate/configuration"})
	}
	return r.vdecls[k]
}

// commandDecl is the registration of the program's define/command.
func (r *registry) commandDecl() *decl {
	if r.cmdDecl == nil {
		pos := r.cmdPos
		if pos == "" {
			pos = r.file
		}
		r.cmdDecl = &decl{id: r.id + ".command", reg: r, pos: pos, form: "define/command"}
	}
	return r.cmdDecl
}
