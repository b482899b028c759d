package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/parqdb/parqdb/indexer"
)

// buildMemoryLimit is the soft memory limit set for long builds when the
// user set none (GOMEMLIMIT): the garbage collector then keeps the heap
// near the build's working set (sample + one chunk + one bucket) instead of
// letting it grow to twice the live heap. Measured: a 1M × 768 build peaks
// at 1.77 GB RSS without it and 1.30 GB with it, at the same CPU time.
const buildMemoryLimit = 1100 << 20

// limitBuildMemory applies buildMemoryLimit unless GOMEMLIMIT is set.
func limitBuildMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(buildMemoryLimit)
	}
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Display tuning of the terminal progress line.
const (
	// etaAfter is how long a stage runs before its line shows an ETA:
	// earlier estimates are noise, and sub-second stages need none.
	etaAfter = 3 * time.Second
	// redrawEvery is the refresh period of the running stage's line.
	redrawEvery = 120 * time.Millisecond
)

// rateStages are the stages whose running line also shows the rate (units
// per second) once etaAfter has passed: long stages of uniform units.
var rateStages = map[string]bool{"join": true}

// rate returns the stage's rate after el ("" when it shows none).
func (s *stageState) rate(el time.Duration) string {
	if !rateStages[s.name] || el < etaAfter || s.done == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f/s", float64(s.done)/el.Seconds())
}

// newProgress returns a progress reporter for long work on w: a
// redrawn status line per stage on a terminal, otherwise a log line per
// stage and every 10 s within a stage; nothing when quiet.
func newProgress(w *os.File, quiet bool) progressReporter {
	switch {
	case quiet:
		return &logProgress{w: io.Discard}
	case isTerminal(w):
		return newTTYProgress(w, cmp.Or(terminalWidth(w), 80))
	}
	return &logProgress{w: w}
}

// progressReporter is indexer.Progress with indexer.ProgressTotaler and
// Close. Every method is safe for concurrent use.
type progressReporter interface {
	Start(stage string, total int64)
	Add(n int64)
	SetTotal(total int64)
	End(stage string, d time.Duration)
	Warn(msg string)
	// Close ends the display; after it returns nothing more is written.
	// A stage still running is shown as stopped. Close may be called more
	// than once; later calls do nothing.
	Close()
}

// stageState is the running stage of a reporter.
type stageState struct {
	name        string
	total, done int64
	start       time.Time
}

func (s *stageState) counts() string {
	unit := indexer.StageUnit(s.name)
	var b strings.Builder
	if s.total > 0 {
		fmt.Fprintf(&b, "%d / %d", s.done, s.total)
	} else if s.done > 0 {
		fmt.Fprintf(&b, "%d", s.done)
	}
	if b.Len() > 0 && unit != "" {
		b.WriteString(" " + unit)
	}
	return b.String()
}

// ttyProgress draws one status line for the running stage, redrawn in
// place ("\r" and erase to end of line; no other control sequences) and
// finished with a newline when the stage ends: a finished stage keeps a
// check mark, its counts and its duration; a stopped one a cross.
type ttyProgress struct {
	w     io.Writer
	width int              // columns; lines are cut to width-1 so they never wrap
	now   func() time.Time // the clock (tests set it)

	mu     sync.Mutex
	cur    *stageState
	frame  int
	closed bool
	stop   chan struct{}
	done   chan struct{}
}

func newTTYProgress(w io.Writer, width int) *ttyProgress {
	p := &ttyProgress{w: w, width: width, now: time.Now, stop: make(chan struct{}), done: make(chan struct{})}
	go p.loop()
	return p
}

// spinner frames of a running stage.
var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Marks of ended stages.
const (
	markDone    = "✓"
	markStopped = "✗"
)

func (p *ttyProgress) loop() {
	defer close(p.done)
	t := time.NewTicker(redrawEvery)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			if p.cur != nil && !p.closed {
				p.frame++
				p.draw(false, "")
			}
			p.mu.Unlock()
		}
	}
}

// draw writes the current stage's line; final ends it with mark and a
// newline. The caller holds mu.
func (p *ttyProgress) draw(final bool, mark string) {
	s := p.cur
	el := p.now().Sub(s.start)
	var line string
	if final {
		line = fmt.Sprintf("%s %-7s  %s", mark, s.name, joinNonEmpty(s.counts(), formatDuration(el)))
		if mark == markStopped {
			line += " (stopped)"
		}
	} else {
		parts := []string{s.counts()}
		if s.total > 0 {
			parts = append(parts, fmt.Sprintf("%3.0f%%", 100*float64(min(s.done, s.total))/float64(s.total)))
		}
		parts = append(parts, formatDuration(el), s.rate(el))
		if s.total > 0 && s.done > 0 && s.done < s.total && el >= etaAfter {
			eta := time.Duration(float64(el) * float64(s.total-s.done) / float64(s.done))
			parts = append(parts, "ETA "+formatDuration(eta))
		}
		line = fmt.Sprintf("%s %-7s  %s", spinner[p.frame%len(spinner)], s.name, joinNonEmpty(parts...))
	}
	if p.width > 1 {
		if r := []rune(line); len(r) > p.width-1 {
			line = string(r[:p.width-1])
		}
	}
	fmt.Fprint(p.w, "\r"+line+"\x1b[K")
	if final {
		fmt.Fprint(p.w, "\n")
	}
}

func (p *ttyProgress) Start(stage string, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if p.cur != nil { // a stage without End: close its line first
		p.draw(true, markDone)
	}
	p.cur = &stageState{name: stage, total: total, start: p.now()}
	p.draw(false, "")
}

func (p *ttyProgress) Add(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur != nil {
		p.cur.done += n
	}
}

func (p *ttyProgress) SetTotal(total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur != nil {
		p.cur.total = total
	}
}

func (p *ttyProgress) End(stage string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if p.cur == nil || p.cur.name != stage {
		// Ended without a start (training skipped: centroids reused).
		p.cur = &stageState{name: stage}
	}
	if p.cur.total > 0 {
		p.cur.done = p.cur.total
	}
	p.cur.start = p.now().Add(-d)
	p.draw(true, markDone)
	p.cur = nil
}

func (p *ttyProgress) Warn(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		fmt.Fprintln(p.w, "warning:", msg)
		return
	}
	fmt.Fprint(p.w, "\r\x1b[K")
	fmt.Fprintln(p.w, "warning:", msg)
	if p.cur != nil {
		p.draw(false, "")
	}
}

func (p *ttyProgress) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	if p.cur != nil {
		p.draw(true, markStopped)
		p.cur = nil
	}
	p.closed = true
	p.mu.Unlock()
	close(p.stop)
	<-p.done
}

// joinNonEmpty joins the non-empty parts with two spaces.
func joinNonEmpty(parts ...string) string {
	var out []string
	for _, s := range parts {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "  ")
}

// formatDuration rounds d for display: milliseconds below a second,
// tenths of a second below a minute, whole seconds above.
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// logProgress writes a line when a stage starts and ends and every 10 s
// within it: progress for logs and pipes.
type logProgress struct {
	w io.Writer

	mu     sync.Mutex
	cur    *stageState
	last   time.Time
	closed bool
}

func (l *logProgress) Start(stage string, total int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.cur, l.last = &stageState{name: stage, total: total, start: time.Now()}, time.Now()
	fmt.Fprintf(l.w, "%s: started\n", stage)
}

func (l *logProgress) Add(n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur == nil || l.closed {
		return
	}
	l.cur.done += n
	if time.Since(l.last) >= 10*time.Second {
		l.last = time.Now()
		el := time.Since(l.cur.start)
		if l.cur.total > 0 {
			line := fmt.Sprintf("%s (%.0f%%)", l.cur.counts(), 100*float64(l.cur.done)/float64(l.cur.total))
			if rate := l.cur.rate(el); rate != "" {
				eta := time.Duration(float64(el) * float64(l.cur.total-min(l.cur.done, l.cur.total)) / float64(l.cur.done))
				line = joinNonEmpty(line, rate, "ETA "+formatDuration(eta))
			}
			fmt.Fprintf(l.w, "%s: %s\n", l.cur.name, line)
		} else {
			fmt.Fprintf(l.w, "%s: %s\n", l.cur.name, joinNonEmpty(l.cur.counts(), l.cur.rate(el)))
		}
	}
}

func (l *logProgress) SetTotal(total int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur != nil {
		l.cur.total = total
	}
}

func (l *logProgress) End(stage string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.cur = nil
	fmt.Fprintf(l.w, "%s: done in %s\n", stage, formatDuration(d))
}

func (l *logProgress) Warn(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.w, "warning:", msg)
}

func (l *logProgress) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	if l.cur != nil {
		fmt.Fprintf(l.w, "%s: stopped after %s\n", l.cur.name, formatDuration(time.Since(l.cur.start)))
		l.cur = nil
	}
	l.closed = true
}
