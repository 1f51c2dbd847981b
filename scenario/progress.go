package scenario

import (
	"fmt"
	"io"
	"time"
)

// Progress shows how a suite run goes: scenarios done of the total,
// failures so far, time elapsed. On a terminal (Live) it is one line
// redrawn in place below the scenario lines; elsewhere (a CI log, a pipe)
// it is a plain line at most every Every. Not safe for concurrent use: the
// suite calls it under its own lock.
type Progress struct {
	W    io.Writer
	Live bool
	// Every spaces the plain lines (default 10s; a negative value writes
	// one after every scenario).
	Every time.Duration
	// Tick is how often the live line is redrawn while scenarios run, so
	// that the time elapsed moves (default 1s).
	Tick time.Duration
	// Now is the clock (tests set it); nil: time.Now.
	Now func() time.Time

	total  int
	began  time.Time
	last   time.Time
	drawn  bool
	done   int
	failed int
}

func (p *Progress) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Progress) start(total int, began time.Time) {
	p.total, p.began, p.last = total, began, p.now()
	if p.Live {
		p.draw()
	}
}

// Text is the progress as one line: "12/340 done, 2 failed, 3.4s".
func (p *Progress) Text() string {
	return fmt.Sprintf("%d/%d done, %d failed, %s", p.done, p.total, p.failed, p.now().Sub(p.began).Round(100*time.Millisecond))
}

func (p *Progress) update(done, failed int) {
	p.done, p.failed = done, failed
	if p.Live {
		p.draw()
		return
	}
	every := p.Every
	if every == 0 {
		every = 10 * time.Second
	}
	if now := p.now(); every < 0 || now.Sub(p.last) >= every {
		p.last = now
		fmt.Fprintln(p.W, "... "+p.Text())
	}
}

// tick redraws the live line (the time elapsed moved).
func (p *Progress) tick() {
	if p.Live {
		p.draw()
	}
}

func (p *Progress) tickEvery() time.Duration {
	if p.Tick > 0 {
		return p.Tick
	}
	return time.Second
}

// draw rewrites the live line.
func (p *Progress) draw() {
	fmt.Fprint(p.W, "\r\033[K"+p.Text())
	p.drawn = true
}

// clear erases the live line so that other lines can be written.
func (p *Progress) clear() {
	if p.Live && p.drawn {
		fmt.Fprint(p.W, "\r\033[K")
		p.drawn = false
	}
}
