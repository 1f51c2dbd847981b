package scenario

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/pin"
	"github.com/attune-dev/attune/store"
)

// Coverage counts, across the scenarios of a run, which registrations of
// which programs ran at least once (behavior coverage, `attune test
// --cover`). A program is its file and source: two scenarios that pin the
// same source add up; an edited source is another program. Safe for
// concurrent use: one Coverage serves every scenario of a suite.
type Coverage struct {
	mu    sync.Mutex
	progs map[progKey]*ProgramCoverage
}

type progKey struct{ file, sha string }

// ProgramCoverage is one program's registrations and how often each ran.
type ProgramCoverage struct {
	Program string `json:"program"` // the program's name
	File    string `json:"file"`    // its file in its pack
	SHA256  string `json:"sha256"`
	// Inline names the scenario file whose [programs] holds it ("" for a
	// program from a pack).
	Inline        string                 `json:"inline,omitempty"`
	Registrations []RegistrationCoverage `json:"registrations"` // in file order
	index         map[string]int
}

// RegistrationCoverage is one registration and how often it ran.
type RegistrationCoverage struct {
	Form string `json:"form"` // guard/tool, hook/round, define/method ...
	Pos  string `json:"pos"`  // file:line
	Runs int    `json:"runs"`
}

// Ran reports how many of the program's registrations ran at least once.
func (p *ProgramCoverage) Ran() int {
	n := 0
	for _, r := range p.Registrations {
		if r.Runs > 0 {
			n++
		}
	}
	return n
}

// NewCoverage returns an empty coverage.
func NewCoverage() *Coverage { return &Coverage{progs: map[progKey]*ProgramCoverage{}} }

// observer is the engine observer of one scenario run.
type observer struct {
	c      *Coverage
	file   string
	inline map[string]bool // sha256 of the scenario's [programs]
}

func (c *Coverage) observer(sc *Scenario) *observer {
	o := &observer{c: c, file: sc.File, inline: map[string]bool{}}
	for _, p := range sc.Programs {
		sum := sha256.Sum256([]byte(p.Source))
		o.inline[hex.EncodeToString(sum[:])] = true
	}
	return o
}

func (o *observer) Registered(r engine.Registration) { o.c.add(o, r, 0) }
func (o *observer) Ran(r engine.Registration)        { o.c.add(o, r, 1) }

func (c *Coverage) add(o *observer, r engine.Registration, runs int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := progKey{r.File, r.SHA256}
	p := c.progs[k]
	if p == nil {
		p = &ProgramCoverage{Program: r.Program, File: r.File, SHA256: r.SHA256, index: map[string]int{}}
		if o.inline[r.SHA256] {
			p.Inline = o.file
		}
		c.progs[k] = p
	}
	key := r.Form + "\x00" + r.Pos
	i, ok := p.index[key]
	if !ok {
		i = len(p.Registrations)
		p.index[key] = i
		p.Registrations = append(p.Registrations, RegistrationCoverage{Form: r.Form, Pos: r.Pos})
	}
	p.Registrations[i].Runs += runs
}

// commandForm finds the line of a command file's define/command.
var commandForm = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`define[/.]command`) })

// pinned counts the command files an instance pinned: a command never
// invoked is never loaded, so the engine never tells of it. Every pin
// holds the engine's own commands (/goal, /plan) whatever the bot selects:
// those count only once invoked.
func (c *Coverage) pinned(ctx context.Context, o *observer, st store.Store, p *pin.Pin) {
	for _, cmd := range p.Commands {
		if cmd.Pack == "behaviors" {
			continue
		}
		c.mu.Lock()
		_, known := c.progs[progKey{cmd.File, cmd.SHA256}]
		c.mu.Unlock()
		if known {
			continue
		}
		line := 1
		if src, err := st.GetBlob(ctx, cmd.SHA256); err == nil {
			if loc := commandForm().FindIndex(src); loc != nil {
				line += strings.Count(string(src[:loc[0]]), "\n")
			}
		}
		c.add(o, engine.Registration{Program: "commands/" + cmd.Name, File: cmd.File, SHA256: cmd.SHA256,
			Form: "define/command", Pos: cmd.File + ":" + strconv.Itoa(line)}, 0)
	}
}

// Programs returns every program seen, sorted by name then file, each
// with its registrations in file order.
func (c *Coverage) Programs() []ProgramCoverage {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]ProgramCoverage, 0, len(c.progs))
	for _, p := range c.progs {
		cp := *p
		cp.Registrations = append([]RegistrationCoverage(nil), p.Registrations...)
		sort.SliceStable(cp.Registrations, func(i, j int) bool {
			return posLess(cp.Registrations[i].Pos, cp.Registrations[j].Pos)
		})
		cp.index = nil
		out = append(out, cp)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Program != b.Program {
			return a.Program < b.Program
		}
		if a.Inline != b.Inline {
			return a.Inline < b.Inline
		}
		return a.SHA256 < b.SHA256
	})
	return out
}

func posLess(a, b string) bool {
	fa, la := splitPos(a)
	fb, lb := splitPos(b)
	if fa != fb {
		return fa < fb
	}
	return la < lb
}

func splitPos(p string) (string, int) {
	i := strings.LastIndexByte(p, ':')
	if i < 0 {
		return p, 0
	}
	n, err := strconv.Atoi(p[i+1:])
	if err != nil {
		return p, 0
	}
	return p[:i], n
}

// Totals returns how many registrations ran and how many there are.
func (c *Coverage) Totals() (ran, total int) {
	for _, p := range c.Programs() {
		ran += p.Ran()
		total += len(p.Registrations)
	}
	return ran, total
}

// Percent is the share of registrations that ran (100 when there are none).
func (c *Coverage) Percent() float64 {
	ran, total := c.Totals()
	if total == 0 {
		return 100
	}
	return 100 * float64(ran) / float64(total)
}

// Label names a program in reports: its name and file, and where an
// inline program comes from.
func (p *ProgramCoverage) Label() string {
	s := p.Program + " (" + p.File
	if p.Inline != "" {
		s += ", inline in " + p.Inline
	}
	return s + ", sha256 " + p.SHA256[:min(12, len(p.SHA256))] + ")"
}

// WriteReport writes the coverage report: per program, every registration
// with how often it ran ("never" when it did not), then the total.
func (c *Coverage) WriteReport(w io.Writer) {
	progs := c.Programs()
	ran, total := 0, 0
	fmt.Fprintln(w, "\nbehavior coverage:")
	for _, p := range progs {
		n := p.Ran()
		ran += n
		total += len(p.Registrations)
		fmt.Fprintf(w, "%s: %d of %d registrations ran\n", p.Label(), n, len(p.Registrations))
		for _, r := range p.Registrations {
			runs := "never ran"
			if r.Runs > 0 {
				runs = fmt.Sprintf("ran %d time(s)", r.Runs)
			}
			fmt.Fprintf(w, "    %-28s %-22s %s\n", r.Pos, r.Form, runs)
		}
	}
	pct := 100.0
	if total > 0 {
		pct = 100 * float64(ran) / float64(total)
	}
	fmt.Fprintf(w, "coverage: %d of %d registrations ran (%.1f%%)\n", ran, total, pct)
}
