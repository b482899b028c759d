package query

import "testing"

// TestPlanCost checks the choice between the exact and the list plan on
// the cases of docs/benchmarks.md: the exact plan wins when the matching
// rows are few or spread so thinly that the list plan would route to
// almost every list; the list plan wins at 10 % and for a predicate whose
// matches sit in a few lists. Before the cost model, a fixed selectivity
// bound sent a 10 % predicate on source lists to the exact plan, which
// scores 2.5 times the rows the list plan now scores.
func TestPlanCost(t *testing.T) {
	for _, tt := range []struct {
		name          string
		m, n          int64
		nprobe, nlist int
		nonEmpty      float64
		ratio         float64
		exact         bool
	}{
		{"fashion 1 %", 600, 60_000, 8, 980, 0.46, 4, true},
		{"fashion 1 %, nprobe 2", 600, 60_000, 2, 980, 0.46, 4, true},
		{"fashion 0.1 %", 57, 60_000, 8, 980, 0.06, 4, true},
		{"fashion 10 %", 6000, 60_000, 8, 980, 1, 4, false},
		{"fashion 10 %, nprobe 2", 6000, 60_000, 2, 980, 1, 4, false},
		{"fashion 50 %", 30_000, 60_000, 8, 980, 1, 4, false},
		{"one class of ten, in 30 % of the lists", 6000, 60_000, 8, 980, 0.3, 4, false},
		{"source lists, 10 %", 100_309, 1_000_000, 8, 200, 1, 1, false},
		{"source lists, 0.5 %", 5000, 1_000_000, 8, 200, 1, 1, true},
		{"every list", 30_000, 60_000, 980, 980, 1, 4, false},
	} {
		exact, lists := planCost(tt.m, tt.n, tt.nprobe, tt.nlist, tt.nonEmpty, tt.ratio)
		if got := exact <= lists; got != tt.exact {
			t.Errorf("%s: exact plan cost %.0f, list plan %.0f: exact %v, want %v", tt.name, exact, lists, got, tt.exact)
		}
	}
}
