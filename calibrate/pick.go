package calibrate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Margin bounds: the safety margin is the chosen point's standard error,
// at least MinMargin (the sample rows are source rows, slightly easier or
// harder than outside queries) and at most MaxMargin (a larger margin
// would trade speed for a guarantee the sample cannot give anyway).
const (
	MinMargin = 0.002
	MaxMargin = 0.01
)

// Pick returns the cheapest point whose recall less its margin
// (clamp(StdErr, MinMargin, MaxMargin)) is at least target. When none
// qualifies it returns the cheapest point that meets the target without
// the margin, and failing that the cheapest point of highest recall, with
// met false. Ties in cost go to the smaller nprobe, then refine.
func (c *Calibration) Pick(target float64) (p Point, met bool, err error) {
	if !(target > 0 && target <= 1) {
		return Point{}, false, fmt.Errorf("%w: got %v", ErrBadTarget, target)
	}
	if len(c.Points) == 0 {
		return Point{}, false, fmt.Errorf("%w: no points", ErrInvalid)
	}
	pts := c.sorted()
	for _, q := range pts {
		if q.Recall-margin(q) >= target-1e-12 {
			return q, true, nil
		}
	}
	for _, q := range pts {
		if q.Recall >= target-1e-12 {
			return q, true, nil
		}
	}
	best := pts[0]
	for _, q := range pts[1:] {
		if q.Recall > best.Recall {
			best = q
		}
	}
	return best, false, nil
}

func margin(p Point) float64 { return math.Min(math.Max(p.StdErr, MinMargin), MaxMargin) }

// sorted returns the points by cost, then nprobe, then refine.
func (c *Calibration) sorted() []Point {
	pts := slices.Clone(c.Points)
	slices.SortStableFunc(pts, func(a, b Point) int {
		return cmp.Or(cmp.Compare(a.Cost, b.Cost), cmp.Compare(a.NProbe, b.NProbe), cmp.Compare(a.Refine, b.Refine))
	})
	return pts
}

// Frontier returns the points no other point beats on both cost and
// recall, by increasing cost (and recall): the recall–cost curve that
// `parqdb index describe` shows.
func (c *Calibration) Frontier() []Point {
	var out []Point
	best := -1.0
	for _, p := range c.sorted() {
		if p.Recall > best {
			out = append(out, p)
			best = p.Recall
		}
	}
	return out
}
