package query

import (
	"math"

	"github.com/parqdb/parqdb/metadata"
)

// exactMinRows is the number of matching rows up to which a filtered
// search always scans the matching rows exactly.
const exactMinRows = 256

// Costs of the plan, in units of one LVQ8 candidate scored (784 bytes of
// codes on Fashion-MNIST): a float32 vector or centroid is 4 (four times
// the bytes), a probed list 8 (its lookup and loop overhead).
const (
	costVector = 4
	costList   = 8
)

// planCost estimates the work of both plans of a filtered search with m
// matching rows of n, nlist lists of which a fraction nonEmpty hold at
// least one match, at nprobe: the exact plan scores m vectors of ratio
// units each (costVector for LVQ codes, 1 when the lists hold source
// vectors); the list plan scores the leaves that hold matches until it has
// enough lists (filterRouteFactor times the lists it probes, at most the
// non-empty ones), then the target's matching rows, plus a per-list cost.
func planCost(m, n int64, nprobe, nlist int, nonEmpty, ratio float64) (exact, lists float64) {
	exact = ratio * float64(m)
	target := min(float64(nprobe)*float64(n)/float64(nlist), float64(m))
	full := max(nonEmpty*float64(nlist), 1)
	perList := float64(m) / full
	probe := min(math.Ceil(target/perList), full)
	routed := min(float64(filterRouteFactor)*probe, full)
	// A centroid is a float32 vector like the exact plan's; a list row
	// costs one unit.
	lists = ratio*routed + target + costList*probe
	return exact, lists
}

// exactPlan reports whether a filtered search with the matching rows of e
// scans them exactly (see planCost).
func (ix *Index) exactPlan(e *filterEntry, nprobe int) bool {
	m := e.info.Rows
	if m <= exactMinRows {
		return true
	}
	exact, lists := planCost(m, e.info.SourceRows, nprobe, ix.NList(), e.nonEmpty(), ix.exactCost())
	return exact <= lists
}

// exactCost is the cost of scoring one exact vector in units of one
// candidate of the lists (see planCost).
func (ix *Index) exactCost() float64 {
	if ix.schema.Encoding == metadata.EncodingSource {
		return 1
	}
	return costVector
}
