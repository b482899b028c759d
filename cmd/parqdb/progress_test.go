package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the display's redraw goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTTYProgressScreen drives the terminal display with a fake clock and
// checks the screen the user is left with.
func TestTTYProgressScreen(t *testing.T) {
	type step func(p *ttyProgress, clock *time.Time)
	advance := func(d time.Duration) step {
		return func(p *ttyProgress, c *time.Time) { p.mu.Lock(); *c = c.Add(d); p.mu.Unlock() }
	}
	redraw := func(p *ttyProgress, _ *time.Time) { p.mu.Lock(); p.draw(false, ""); p.mu.Unlock() }
	start := func(stage string, total int64) step {
		return func(p *ttyProgress, _ *time.Time) { p.Start(stage, total) }
	}
	add := func(n int64) step { return func(p *ttyProgress, _ *time.Time) { p.Add(n) } }
	end := func(stage string, d time.Duration) step {
		return func(p *ttyProgress, _ *time.Time) { p.End(stage, d) }
	}
	for _, tc := range []struct {
		name    string
		width   int
		steps   []step
		running bool     // want is the screen before Close, not after
		want    []string // the screen's lines, exactly
	}{
		{"finished stages keep a mark and their duration", 100, []step{
			start("scan", 1000), advance(200 * time.Millisecond), add(1000), redraw, end("scan", 200*time.Millisecond),
			start("train", 340), advance(2 * time.Second), add(100), redraw, end("train", 2*time.Second),
			start("commit", 0), advance(4 * time.Millisecond), redraw, end("commit", 4*time.Millisecond),
		}, false, []string{
			"✓ scan     1000 / 1000 rows  200ms",
			"✓ train    340 / 340 iterations  2s",
			"✓ commit   4ms",
		}},
		{"no ETA on a sub-second stage", 100, []step{
			start("write", 16), advance(500 * time.Millisecond), add(8), redraw,
		}, true, []string{"⠋ write    8 / 16 buckets   50%  500ms"}},
		{"no ETA before 3 s", 100, []step{
			start("scan", 1000), advance(2900 * time.Millisecond), add(100), redraw,
		}, true, []string{"⠋ scan     100 / 1000 rows   10%  2.9s"}},
		{"ETA after 3 s", 100, []step{
			start("scan", 1000), advance(4 * time.Second), add(500), redraw,
		}, true, []string{"⠋ scan     500 / 1000 rows   50%  4s  ETA 4s"}},
		{"a join shows its rate after 3 s", 100, []step{
			start("join", 10000), advance(4 * time.Second), add(6000), redraw,
		}, true, []string{"⠋ join     6000 / 10000 queries   60%  4s  1500/s  ETA 2.7s"}},
		{"a stage ended without a start", 100, []step{
			end("train", 3*time.Millisecond),
		}, false, []string{"✓ train    3ms"}},
		{"a stopped stage keeps a cross", 100, []step{
			start("assign", 10000), advance(1500 * time.Millisecond), add(9000), redraw,
		}, false, []string{"✗ assign   9000 / 10000 rows  1.5s (stopped)"}},
		{"a warning goes above the running stage", 100, []step{
			start("scan", 10), add(5), func(p *ttyProgress, _ *time.Time) { p.Warn("few rows per list") },
		}, false, []string{"warning: few rows per list", "✗ scan     5 / 10 rows  0s (stopped)"}},
		{"lines never wrap", 20, []step{
			start("assign", 10000), advance(4 * time.Second), add(9000), redraw, end("assign", 4*time.Second),
		}, false, []string{"✓ assign   10000 /"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out syncBuffer
			clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			p := newTTYProgress(&out, tc.width)
			p.mu.Lock()
			p.now = func() time.Time { return clock }
			p.mu.Unlock()
			for _, s := range tc.steps {
				p.mu.Lock()
				p.frame = 0 // the redraw goroutine turns the spinner
				p.mu.Unlock()
				s(p, &clock)
			}
			p.mu.Lock()
			p.frame = 0
			p.mu.Unlock()
			// The screen before Close, for the running-stage cases.
			running := screen(t, out.String())
			p.Close()
			n := len(out.String())
			p.Start("late", 1)
			p.Add(1)
			if len(out.String()) != n {
				t.Fatalf("output after Close: %q", out.String()[n:])
			}
			got := screen(t, out.String())
			if tc.running {
				got = running
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("screen:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// screen renders terminal output into its lines as a terminal shows them:
// "\r" returns to the first column, "\n" starts a new line, ESC [ K erases
// to the end of the line. Any other control sequence fails the test (the
// progress display promises to use no other).
func screen(t *testing.T, out string) []string {
	t.Helper()
	var lines [][]rune
	var cur []rune
	col := 0
	rs := []rune(out)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; r {
		case '\r':
			col = 0
		case '\n':
			lines = append(lines, cur)
			cur, col = nil, 0
		case 0x1b:
			if i+2 < len(rs) && rs[i+1] == '[' && rs[i+2] == 'K' {
				cur = cur[:min(col, len(cur))]
				i += 2
				continue
			}
			t.Fatalf("unexpected control sequence %q in output:\n%q", string(rs[i:min(i+8, len(rs))]), out)
		default:
			if col < len(cur) {
				cur[col] = r
			} else {
				cur = append(cur, r)
			}
			col++
		}
	}
	lines = append(lines, cur)
	var text []string
	for _, l := range lines {
		text = append(text, strings.TrimRight(string(l), " "))
	}
	for len(text) > 0 && text[len(text)-1] == "" {
		text = text[:len(text)-1]
	}
	return text
}
