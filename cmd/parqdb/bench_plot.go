package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The figure's size: the axes take plotWidth × plotHeight, the legend a
// strip of its own height beneath them.
const (
	plotWidth  = 9 * vg.Inch
	plotHeight = 5 * vg.Inch
	legendGap  = 6 // points between the axes' strip and the legend's
)

// benchPlot is the recall–QPS figure of a bench run: the axes with one
// curve per refine factor and clock, each point of the one-thread
// wall-clock curves labelled with its nprobe, the --recall rows as rings
// labelled with their target and setting, and the legend drawn in a strip
// beneath the axes, so that it covers no point whatever the data.
type benchPlot struct {
	p       *plot.Plot
	legends []plot.Legend // the legend's columns, left to right
	// points are every plotted point in data coordinates, and labels
	// every text drawn at a point (for the tests).
	points []plotter.XY
	labels []string
}

// plotBench writes the recall–QPS figure of sweep (the nprobe × refine
// rows) and targets (the --recall rows) to path as a PNG.
func plotBench(path, title string, k int, sweep, targets []benchRow) error {
	bp, err := newBenchPlot(title, k, sweep, targets)
	if err != nil {
		return fmt.Errorf("--plot %s: %w", path, err)
	}
	img := vgimg.New(plotWidth, bp.height())
	bp.draw(draw.New(img))
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--plot %s: %w", path, err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("--plot %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--plot %s: %w", path, err)
	}
	return nil
}

// benchPalette colours the refine factors in turn.
var benchPalette = []color.RGBA{{0x1f, 0x77, 0xb4, 255}, {0xd6, 0x27, 0x28, 255}, {0x2c, 0xa0, 0x2c, 255}, {0x94, 0x67, 0xbd, 255}, {0xff, 0x7f, 0x0e, 255}}

// newBenchPlot lays out the figure; rows whose QPS is 0 (a clock the
// platform does not report) are left out of their curve.
func newBenchPlot(title string, k int, sweep, targets []benchRow) (*benchPlot, error) {
	bp := &benchPlot{p: plot.New()}
	p := bp.p
	p.Title.Text = title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = fmt.Sprintf("recall@%d (share of the exact %d nearest neighbours found)", k, k)
	p.Y.Label.Text = "queries per second (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.X.Tick.Marker = linearTicks{}
	p.Add(plotter.NewGrid())

	var refines []int
	for _, r := range sweep {
		if len(refines) == 0 || refines[len(refines)-1] != r.Refine {
			refines = append(refines, r.Refine)
		}
	}
	var entries []legendEntry
	for i, rf := range refines {
		c := benchPalette[i%len(benchPalette)]
		name := fmt.Sprintf("refine %d", rf)
		if rf == 0 {
			name = "no refine"
		}
		for _, mode := range []string{"wall", "cpu", "threads"} {
			var pts plotter.XYs
			var nprobes []string
			threads := 0
			for _, r := range sweep {
				if r.Refine != rf {
					continue
				}
				y := r.QPS1
				switch mode {
				case "cpu":
					y = r.QPSCPU
				case "threads":
					y, threads = r.QPSN, r.Threads
				}
				if y > 0 {
					pts = append(pts, plotter.XY{X: r.Recall, Y: y})
					nprobes = append(nprobes, strconv.Itoa(r.NProbe))
				}
			}
			if len(pts) == 0 || (mode == "threads" && threads <= 1) {
				continue
			}
			line, points, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			line.Color, points.Color = c, c
			line.Width = vg.Points(1.5)
			points.Shape = draw.CircleGlyph{}
			label := name
			switch mode {
			case "wall":
				label += ", 1 thread (wall clock)"
			case "cpu":
				label += ", 1 thread (per CPU-second)"
				line.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
				points.Shape = draw.BoxGlyph{}
			case "threads":
				label += fmt.Sprintf(", %d threads (wall clock)", threads)
				line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
				points.Shape = draw.TriangleGlyph{}
			}
			p.Add(line, points)
			bp.points = append(bp.points, pts...)
			entries = append(entries, legendEntry{label, []plot.Thumbnailer{line, points}})
			if mode == "wall" {
				// Refine factors alternate above and below their points:
				// at one nprobe their recall is often the same.
				above := i%2 == 0
				bp.addLabels(pts, nprobes, c, above, 0)
			}
		}
	}
	if len(targets) > 0 {
		var pts plotter.XYs
		var texts []string
		for _, r := range targets {
			if r.QPS1 > 0 {
				pts = append(pts, plotter.XY{X: r.Recall, Y: r.QPS1})
				texts = append(texts, fmt.Sprintf("target %s: nprobe %d, refine %d", strconv.FormatFloat(r.Target, 'g', -1, 64), r.NProbe, r.Refine))
			}
		}
		if len(pts) > 0 {
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return nil, err
			}
			sc.Shape = draw.RingGlyph{}
			sc.Radius = vg.Points(7)
			sc.Color = color.Black
			p.Add(sc)
			bp.points = append(bp.points, pts...)
			bp.addLabels(pts, texts, color.Black, false, sc.Radius)
			entries = append(entries, legendEntry{"--recall target's setting, 1 thread (wall clock)", []plot.Thumbnailer{sc}})
		}
	}
	entries = append(entries, legendEntry{"numbers at the points: nprobe", nil})
	bp.setRanges()
	bp.legends = legendColumns(entries)
	return bp, nil
}

// legendEntry is one line of the legend.
type legendEntry struct {
	text   string
	thumbs []plot.Thumbnailer
}

// legendColumns spreads entries over one legend column, or two when there
// are more than five.
func legendColumns(entries []legendEntry) []plot.Legend {
	cols := 1
	if len(entries) > 5 {
		cols = 2
	}
	per := (len(entries) + cols - 1) / cols
	var out []plot.Legend
	for c := 0; c < cols; c++ {
		l := plot.NewLegend()
		l.Top, l.Left = true, true
		l.TextStyle.Font.Size = vg.Points(10)
		for _, e := range entries[c*per : min((c+1)*per, len(entries))] {
			l.Add(e.text, e.thumbs...)
		}
		out = append(out, l)
	}
	return out
}

// addLabels labels each point of pts with its text, in colour c, above or
// below it and clear of a glyph of radius r; a label in the right half of
// the x range ends at its point, so that it stays inside the axes.
func (bp *benchPlot) addLabels(pts plotter.XYs, texts []string, c color.Color, above bool, r vg.Length) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pt := range bp.points {
		lo, hi = min(lo, pt.X), max(hi, pt.X)
	}
	for i, pt := range pts {
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{pt}, Labels: texts[i : i+1]})
		if err != nil {
			continue // one point, one label: cannot fail
		}
		sty := &l.TextStyle[0]
		sty.Font.Size = vg.Points(9)
		sty.Color = c
		gap := r + vg.Points(4)
		l.Offset = vg.Point{X: gap, Y: gap}
		if pt.X > (lo+hi)/2 {
			sty.XAlign = text.XRight
			l.Offset.X = -gap
		}
		if !above {
			l.Offset.Y = -gap - sty.Font.Size
		}
		bp.p.Add(l)
		bp.labels = append(bp.labels, texts[i])
	}
}

// setRanges fits the axes to the points with a margin on every side, so
// that no point or label sits on the frame.
func (bp *benchPlot) setRanges() {
	p := bp.p
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, pt := range bp.points {
		xlo, xhi = min(xlo, pt.X), max(xhi, pt.X)
		ylo, yhi = min(ylo, pt.Y), max(yhi, pt.Y)
	}
	if len(bp.points) == 0 {
		xlo, xhi, ylo, yhi = 0, 1, 1, 10
	}
	pad := max((xhi-xlo)*0.06, 0.01)
	p.X.Min, p.X.Max = xlo-pad, xhi+pad
	p.Y.Min, p.Y.Max = ylo/1.35, yhi*1.35
}

// height is the figure's height: the axes and the legend beneath them.
func (bp *benchPlot) height() vg.Length {
	var h vg.Length
	for i := range bp.legends {
		h = max(h, bp.legends[i].Rectangle(draw.Canvas{}).Size().Y)
	}
	return plotHeight + h + 2*legendGap
}

// layout splits c into the axes' area (top) and the legend's strip
// beneath it.
func (bp *benchPlot) layout(c draw.Canvas) (axes, legend draw.Canvas) {
	lh := c.Size().Y - plotHeight
	axes = draw.Crop(c, 0, 0, lh, 0)
	legend = draw.Crop(c, 0, 0, 0, -(c.Size().Y - lh))
	legend = draw.Crop(legend, vg.Points(40), -vg.Points(10), legendGap, -legendGap)
	return axes, legend
}

// legendRects returns the rectangle of each legend column drawn in the
// legend strip of c.
func (bp *benchPlot) legendRects(c draw.Canvas) []vg.Rectangle {
	_, strip := bp.layout(c)
	var out []vg.Rectangle
	x := strip.Min.X
	for i := range bp.legends {
		col := strip
		col.Min.X = x
		r := bp.legends[i].Rectangle(col)
		// Rectangle anchors a left legend at the right edge; it is drawn
		// from the left.
		w := r.Size().X
		r.Min.X, r.Max.X = x, x+w
		out = append(out, r)
		x += w + vg.Points(24)
	}
	return out
}

// draw draws the figure on c.
func (bp *benchPlot) draw(c draw.Canvas) {
	axes, _ := bp.layout(c)
	bp.p.Draw(axes)
	for i, r := range bp.legendRects(c) {
		col := c
		col.Rectangle = r
		bp.legends[i].Draw(col)
	}
}

// logTicks labels a log axis at 1, 2 and 5 times each power of ten (and
// 3 when the axis spans less than a factor of 100, every integer multiple
// when less than 10), with a short unlabelled tick at the other integer
// multiples: at least three labels on any axis newBenchPlot sets.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0 && hi > lo) {
		return nil
	}
	labelled := map[float64]bool{1: true, 2: true, 5: true, 3: hi/lo < 100}
	dense := hi/lo < 10
	var ticks []plot.Tick
	for p := math.Pow(10, math.Floor(math.Log10(lo))); p <= hi; p *= 10 {
		for m := 1.0; m <= 9; m++ {
			v := p * m
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if dense || labelled[m] {
				t.Label = siNumber(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// siNumber writes v with k or M for thousands and millions: 500, 20k, 1.5M.
func siNumber(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// linearTicks labels a linear axis at the multiples of the 1, 2 or 5 step
// that gives 4 to 10 labels, with an unlabelled tick half way between;
// labels have as many decimals as the step.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return nil
	}
	step := tickStep(hi - lo)
	decimals := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	for i := math.Ceil(lo / step * 2); i/2*step <= hi; i++ {
		v := i / 2 * step
		t := plot.Tick{Value: v}
		if int(i)%2 == 0 {
			t.Label = strconv.FormatFloat(v, 'f', decimals, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// tickStep returns the smallest step of 1, 2 or 5 times a power of ten
// that divides span into at most 10 parts.
func tickStep(span float64) float64 {
	for e := math.Floor(math.Log10(span)) - 1; ; e++ {
		for _, m := range []float64{1, 2, 5} {
			if s := m * math.Pow(10, e); span/s <= 10 {
				return s
			}
		}
	}
}
