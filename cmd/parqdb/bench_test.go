package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/parqdb/parqdb/internal/ivecs"
)

// One pass per timed measurement in this package's in-process bench runs
// (many tests run bench to check something else); the tests below that
// check the repetition give --min-time or use passTimer directly.
func init() { benchMinTime = 0 }

// countProgress is a progressReporter that counts what Add reports.
type countProgress struct {
	logProgress
	n atomic.Int64
}

func (c *countProgress) Add(n int64) { c.n.Add(n) }

// TestPassTimer: the timed pass repeats until the minimum time has passed
// since the first pass began and the result is the median pass (wall and
// CPU), on a fake clock that each pass advances by its scripted duration.
func TestPassTimer(t *testing.T) {
	ms := time.Millisecond
	script := []time.Duration{5 * ms, 1 * ms, 3 * ms, 2 * ms, 4 * ms, 9 * ms, 9 * ms}
	for _, tc := range []struct {
		name      string
		minTime   time.Duration
		passes    int
		wall, cpu time.Duration
	}{
		{"zero: one pass", 0, 1, 5 * ms, 10 * ms},
		{"within the first pass", 5 * ms, 1, 5 * ms, 10 * ms},
		{"odd count", 14 * ms, 5, 3 * ms, 6 * ms},                                           // 5+1+3+2+4 = 15 ≥ 14
		{"even count: mean of the middle two", 11 * ms, 4, 2500 * time.Microsecond, 5 * ms}, // 5+1+3+2 = 11
	} {
		t.Run(tc.name, func(t *testing.T) {
			var now time.Time
			calls := 0
			timer := passTimer{minTime: tc.minTime, now: func() time.Time { return now }}
			p := &countProgress{logProgress: logProgress{w: io.Discard}}
			got, err := timer.run(context.Background(), p, 100, func() (time.Duration, error) {
				d := script[calls]
				calls++
				now = now.Add(d)
				return 2 * d, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if calls != tc.passes || got.passes != tc.passes || got.wall != tc.wall || got.cpu != tc.cpu {
				t.Fatalf("%d calls, %+v; want %d passes, wall %v, cpu %v", calls, got, tc.passes, tc.wall, tc.cpu)
			}
			if n := p.n.Load(); n != 100 {
				t.Fatalf("progress advanced by %d, want the 100 units given", n)
			}
		})
	}
	// A cancelled context stops the repetition with its error.
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	timer := passTimer{minTime: time.Hour, now: time.Now}
	_, err := timer.run(ctx, &logProgress{w: io.Discard}, 1, func() (time.Duration, error) {
		if calls++; calls == 3 {
			cancel()
		}
		return 0, nil
	})
	if err != context.Canceled || calls != 3 {
		t.Fatalf("cancelled: %v after %d passes", err, calls)
	}
}

// TestBenchMinTime: --min-time repeats each timed pass (reported as
// passes_1t and passes_nt, QPS from the median pass) and is range checked
// by name.
func TestBenchMinTime(t *testing.T) {
	wh := gloveWarehouse(t)
	qf := filepath.Join(t.TempDir(), "q.fvecs")
	writeFvecs(t, qf, gloveQueries(5))
	out, errs, code := runSplit(t, "--warehouse", wh, "bench", "words", "--queries", qf, "-k", "5", "--nprobe", "2",
		"--cold-queries", "1", "--threads", "2", "--min-time", "30ms", "--format", "json", "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r benchRow
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &r); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	// Five warm queries take far less than 30 ms on any machine this
	// runs on: more than one pass each.
	if r.Passes1 < 2 || r.PassesN < 2 || r.QPS1 <= 0 || r.QPSN <= 0 || r.QPSNSingle <= 0 {
		t.Fatalf("--min-time 30ms: %+v, want repeated passes", r)
	}
	out, _, code = runSplit(t, "--warehouse", wh, "bench", "words", "--queries", qf, "-k", "5", "--nprobe", "2",
		"--cold-queries", "1", "--min-time", "0", "--format", "json", "-q")
	if code != exitOK || json.Unmarshal([]byte(strings.TrimSpace(out)), &r) != nil || r.Passes1 != 1 || r.PassesN != 1 {
		t.Fatalf("--min-time 0: exit %d, %+v; want one pass each", code, r)
	}
	for _, bad := range []string{"-1s", "2m", "fast"} {
		_, errs, code := runSplit(t, "--warehouse", wh, "bench", "words", "--queries", qf, "--min-time", bad)
		if code != exitUsage || !strings.Contains(errs, "--min-time") {
			t.Errorf("--min-time %s: exit %d: %s", bad, code, errs)
		}
	}
}

// TestBenchColdQueries: --cold-queries 0 runs no cold pass (its columns
// are left out of the table, cold_queries is 0 in JSON), and the warning
// about exact vectors read from source pages in the cold pass appears on
// standard error exactly when a cold pass runs with refine (or on the
// source encoding) on an index without a vectors file.
func TestBenchColdQueries(t *testing.T) {
	wh := gloveWarehouse(t)
	if _, errs, code := runSplit(t, "--warehouse", wh, "index", "create", "wordsvf", "--source", gloveSample,
		"--vector-field", "embedding", "--key-fields", "word", "--metric", "cosine", "--nlist", "50", "--vectors-file", "-q"); code != exitOK {
		t.Fatalf("index create --vectors-file: exit %d: %s", code, errs)
	}
	if _, errs, code := runSplit(t, "--warehouse", wh, "index", "create", "wordssrc", "--source", gloveSample,
		"--vector-field", "embedding", "--key-fields", "word", "--metric", "cosine", "--nlist", "50", "--encoding", "source", "-q"); code != exitOK {
		t.Fatalf("index create --encoding source: exit %d: %s", code, errs)
	}
	qf := filepath.Join(t.TempDir(), "q.fvecs")
	writeFvecs(t, qf, gloveQueries(4))
	for _, tc := range []struct {
		name, index, refine, cold string
		warn                      bool
	}{
		{"refine, cold pass, no vectors file", "words", "0,2", "3", true},
		{"no refine", "words", "0", "3", false},
		{"no cold pass", "words", "2", "0", false},
		{"vectors file", "wordsvf", "2", "3", false},
		{"source encoding, no refine", "wordssrc", "0", "3", true},
		{"source encoding, no cold pass", "wordssrc", "0", "0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--warehouse", wh, "bench", tc.index, "--queries", qf, "-k", "5", "--nprobe", "1,4", "--refine", tc.refine, "--cold-queries", tc.cold, "-q"}
			out, errs, code := runSplit(t, args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			warned := strings.Contains(errs, "warning: the cold pass")
			if warned != tc.warn {
				t.Fatalf("warning printed %v, want %v: %s", warned, tc.warn, errs)
			}
			if warned && (!strings.Contains(errs, "--vectors-file") || !strings.Contains(errs, "--cold-queries 0") || strings.Count(errs, "warning:") != 1) {
				t.Fatalf("the warning names neither --vectors-file nor --cold-queries 0, or repeats: %s", errs)
			}
			if hasCold := strings.Contains(out, "cold_bytes/q"); hasCold != (tc.cold != "0") {
				t.Fatalf("cold columns shown %v with --cold-queries %s:\n%s", hasCold, tc.cold, out)
			}
			out, _, code = runSplit(t, append(args, "--format", "json")...)
			if code != exitOK {
				t.Fatalf("json: exit %d", code)
			}
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				var r benchRow
				if err := json.Unmarshal([]byte(l), &r); err != nil {
					t.Fatal(err)
				}
				want, _ := strconv.Atoi(tc.cold)
				if r.ColdQueries != want || (want == 0 && (r.ColdBytes != 0 || r.ColdRequests != 0)) || (want > 0 && r.ColdBytes <= 0) {
					t.Fatalf("--cold-queries %s: %+v", tc.cold, r)
				}
			}
		})
	}
}

// TestBenchPlotLayout renders the figure onto a recording canvas and
// checks what a reader relies on: each one-thread point is labelled with
// its nprobe next to it, each --recall row with its target, the axes
// have their labels and labelled ticks, every point lies inside the axes
// (off the frame), and the legend lies outside the axes, so that it
// covers no point.
func TestBenchPlotLayout(t *testing.T) {
	var sweep []benchRow
	for i, np := range []int{1, 2, 4, 8, 16, 32} {
		for _, rf := range []int{0, 4} {
			q := 600e3 / math.Pow(1.6, float64(i)) / float64(1+rf/4)
			sweep = append(sweep, benchRow{NProbe: np, Refine: rf, Recall: 0.6 + 0.07*float64(i) + 0.005*float64(rf), QPS1: q, QPSCPU: q * 1.02, QPSN: q * 1.7, Threads: 2})
		}
	}
	// Sorted by refine, as bench makes them.
	slices.SortStableFunc(sweep, func(a, b benchRow) int { return a.Refine - b.Refine })
	targets := []benchRow{{Target: 0.95, NProbe: 24, Refine: 2, Recall: 0.962, QPS1: 90e3}}
	t.Run("sweep and target", func(t *testing.T) {
		checkBenchPlot(t, sweep, targets, []string{"--recall target", "target 0.95: nprobe 24, refine 2", "2 threads (wall clock)", "per CPU-second", "0.60", "0.70", "0.80", "0.90"})
	})
	t.Run("one setting", func(t *testing.T) {
		checkBenchPlot(t, []benchRow{{NProbe: 8, Recall: 0.965, QPS1: 3e5, QPSCPU: 3.1e5, QPSN: 1e5, Threads: 2}}, nil, []string{"8", "2 threads (wall clock)"})
	})
}

// checkBenchPlot renders the figure of sweep and targets and checks it
// (TestBenchPlotLayout); wantTexts must each be drawn somewhere.
func checkBenchPlot(t *testing.T, sweep, targets []benchRow, wantTexts []string) {
	t.Helper()
	bp, err := newBenchPlot("words: recall@10 vs QPS", 10, sweep, targets)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder.Canvas{}
	c := draw.NewCanvas(rec, plotWidth, bp.height())
	bp.draw(c)
	type drawnText struct {
		s     string
		at    vg.Point // the start of the baseline
		width vg.Length
	}
	var texts []drawnText
	for _, a := range rec.Actions {
		if fs, ok := a.(*recorder.FillString); ok {
			sty := text.Style{Font: font.From(fs.Font, fs.Size), Handler: plot.DefaultTextHandler}
			texts = append(texts, drawnText{fs.String, fs.Point, sty.Width(fs.String)})
		}
	}
	axes, _ := bp.layout(c)
	dc := bp.p.DataCanvas(axes)
	xf, yf := bp.p.Transforms(&dc)
	at := func(x, y float64) vg.Point { return vg.Point{X: xf(x), Y: yf(y)} }
	near := func(s string, pt vg.Point) bool {
		for _, tx := range texts {
			// Within 30 points of pt, from either end of the text.
			if tx.s == s && tx.at.X < pt.X+30 && tx.at.X+tx.width > pt.X-30 && math.Abs(float64(tx.at.Y-pt.Y)) < 30 {
				return true
			}
		}
		return false
	}
	for _, r := range sweep {
		if !near(strconv.Itoa(r.NProbe), at(r.Recall, r.QPS1)) {
			t.Errorf("no label %d next to the point of nprobe %d refine %d", r.NProbe, r.NProbe, r.Refine)
		}
	}
	for _, r := range targets {
		if s := fmt.Sprintf("target %v: nprobe %d, refine %d", r.Target, r.NProbe, r.Refine); !near(s, at(r.Recall, r.QPS1)) {
			t.Errorf("the --recall row %v is not labelled %q next to it", r.Target, s)
		}
	}
	has := func(sub string) int {
		n := 0
		for _, tx := range texts {
			if strings.Contains(tx.s, sub) {
				n++
			}
		}
		return n
	}
	for _, s := range append([]string{"recall@10", "queries per second", "numbers at the points: nprobe"}, wantTexts...) {
		if has(s) == 0 {
			t.Errorf("no text %q", s)
		}
	}
	if n := has("k"); n < 3 {
		t.Errorf("%d labelled QPS ticks (20k, 50k, …), want 3 or more", n)
	}
	if n := has("0."); n < 3 {
		t.Errorf("%d labelled recall ticks, want 3 or more", n)
	}
	inside := func(r vg.Rectangle, p vg.Point, margin vg.Length) bool {
		return p.X > r.Min.X+margin && p.X < r.Max.X-margin && p.Y > r.Min.Y+margin && p.Y < r.Max.Y-margin
	}
	for _, pt := range bp.points {
		if !inside(dc.Rectangle, at(pt.X, pt.Y), 3) {
			t.Errorf("point %v is on or outside the axes' frame %v", pt, dc.Rectangle)
		}
	}
	for _, lr := range bp.legendRects(c) {
		if lr.Max.Y > dc.Min.Y || lr.Size().X <= 0 || lr.Size().Y <= 0 {
			t.Errorf("legend %v reaches into the axes %v", lr, dc.Rectangle)
		}
		for _, pt := range bp.points {
			if inside(lr, at(pt.X, pt.Y), 0) {
				t.Errorf("legend %v covers point %v", lr, pt)
			}
		}
	}
	// Every legend entry was drawn inside a legend rectangle.
	for _, tx := range texts {
		if strings.Contains(tx.s, "wall clock") || strings.Contains(tx.s, "CPU-second") {
			in := false
			for _, lr := range bp.legendRects(c) {
				in = in || (tx.at.Y >= lr.Min.Y-1 && tx.at.Y <= lr.Max.Y+1 && tx.at.X >= lr.Min.X-1 && tx.at.X <= lr.Max.X+1)
			}
			if !in {
				t.Errorf("legend text %q at %v is outside the legend", tx.s, tx.at)
			}
		}
	}
}

func TestBenchRecallAndPlot(t *testing.T) {
	wh := gloveWarehouse(t)
	dir := t.TempDir()
	qf := filepath.Join(dir, "q.fvecs")
	writeFvecs(t, qf, gloveQueries(20))
	png := filepath.Join(dir, "curve.png")
	out, errs, code := runSplit(t, "--warehouse", wh, "bench", "words", "--queries", qf, "-k", "5",
		"--nprobe", "1,50", "--refine", "0,3", "--plot", png, "--format", "json", "--threads", "2", "--cold-queries", "5", "--join", "--recall", "0.9")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rows []benchRow
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r benchRow
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %q", err, l)
		}
		rows = append(rows, r)
	}
	if len(rows) != 5 || rows[4].Target != 0.9 {
		t.Fatalf("%d settings, want 4 and the --recall row", len(rows))
	}
	for _, r := range rows {
		if r.QPS1 <= 0 || r.QPSN <= 0 || r.QPSJoin <= 0 || r.QPSKeysCPU <= 0 || r.QPSJoinCPU <= 0 || r.Candidates <= 0 || r.ColdBytes <= 0 || r.ColdRequests <= 0 {
			t.Fatalf("setting %+v: a measure is missing", r)
		}
	}
	// All 50 lists with refine: exact.
	if r := rows[3]; r.NProbe != 50 || r.Refine != 3 || r.Recall != 1.0 {
		t.Fatalf("nprobe 50 refine 3: %+v, want recall 1", r)
	}
	if rows[0].Recall > rows[1].Recall {
		t.Fatalf("recall fell with nprobe: %+v", rows[:2])
	}
	b, err := os.ReadFile(png)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n")) {
		t.Fatalf("plot: %v, %d bytes", err, len(b))
	}
}

// TestBenchGroundTruthFile: --ground-truth as .ivecs row numbers; a file
// with too few neighbours, or one that is not the ground truth of the
// queries (here: the rows of another query order), is refused by name.
func TestBenchGroundTruthFile(t *testing.T) {
	wh := gloveWarehouse(t)
	dir := t.TempDir()
	// the queries are rows 0 and 3 of the sample: each is its own nearest
	rows, err := parquet.ReadFile[struct {
		Embedding []float32 `parquet:"embedding,list"`
	}](gloveSample)
	if err != nil {
		t.Fatal(err)
	}
	qf := filepath.Join(dir, "q.fvecs")
	writeFvecs(t, qf, [][]float32{rows[0].Embedding, rows[3].Embedding})
	writeIvecs := func(name string, nbrs [][]int32) string {
		var b []byte
		for _, row := range nbrs {
			b = binary.LittleEndian.AppendUint32(b, uint32(len(row)))
			for _, x := range row {
				b = binary.LittleEndian.AppendUint32(b, uint32(x))
			}
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	gt := writeIvecs("gt.ivecs", [][]int32{{0, 1, 2}, {3, 4, 5}})
	got, err := ivecs.Read(gt)
	if err != nil || len(got) != 2 || got[1][2] != 5 {
		t.Fatalf("readIvecs: %v %v", got, err)
	}
	swapped := writeIvecs("swapped.ivecs", [][]int32{{3, 4, 5}, {0, 1, 2}})
	_, errs, code := runSplit(t, "--warehouse", wh, "bench", "words", "--queries", qf, "--ground-truth", swapped, "-k", "3", "--nprobe", "2")
	if code != exitProblem || !strings.Contains(errs, swapped+" is not the ground truth of these queries: on 2 of the 2 checked") ||
		!strings.Contains(errs, "source row 3") {
		t.Fatalf("swapped ground truth: exit %d: %s", code, errs)
	}
	// k larger than the ground truth rows: refused.
	_, errs, code = runSplit(t, "--warehouse", wh, "bench", "words", "--queries", qf, "--ground-truth", gt, "-k", "10", "--nprobe", "2")
	if code != exitProblem || !strings.Contains(errs, "has 3 neighbours") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// k = 3: runs, with recall measured against rows 0..5.
	out, errs, code := runSplit(t, "--warehouse", wh, "bench", "words", "--queries", qf, "--ground-truth", gt, "-k", "3", "--nprobe", "2", "--format", "json")
	if code != exitOK || !strings.Contains(out, `"recall"`) {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	if _, errs, code := runSplit(t, "--warehouse", wh, "bench", "words", "--queries", qf, "--nprobe", "0"); code != exitUsage {
		t.Fatalf("--nprobe 0: exit %d %s", code, errs)
	}
}
