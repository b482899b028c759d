package calibrate

import (
	"cmp"
	"fmt"
	"slices"
)

// The pick's safety rule: a point qualifies for a target when its
// calibrated recall meets the target (so searches meet it on average) and
// its lower confidence bound, recall − Z·stderr (one-sided ≈ 97.7%), is
// within Tolerance of the target (so a search falls short by more than
// Tolerance only rarely). With 300 queries the standard error near recall
// 0.95 is about 0.005, so the bound adds no margin there; it does where
// the sample is noisy (few rows, low recall). A fixed extra margin would
// instead push every pick one grid step up, about 1.25× the cost.
const (
	Z         = 2.0
	Tolerance = 0.01
)

// Pick returns the cheapest point that qualifies for target (Z,
// Tolerance). When none qualifies it returns the cheapest point that meets
// the target by its recall alone, and failing that the cheapest point of
// highest recall, with met false. Ties in cost go to the smaller nprobe,
// then refine.
func (c *Calibration) Pick(target float64) (p Point, met bool, err error) {
	if !(target > 0 && target <= 1) {
		return Point{}, false, fmt.Errorf("%w: got %v", ErrBadTarget, target)
	}
	if len(c.Points) == 0 {
		return Point{}, false, fmt.Errorf("%w: no points", ErrInvalid)
	}
	pts := c.sorted()
	for _, q := range pts {
		if q.Recall >= target-1e-12 && q.Recall-Z*q.StdErr >= target-Tolerance-1e-12 {
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
