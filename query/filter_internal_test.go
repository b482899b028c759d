package query

import "testing"

// TestExactRows checks the plan's bound c·m ≤ min(nprobe/σ, nlist)·n/nlist, including
// the encoding term: with source lists (c = 1) a 10 % filter on a 1M-row
// index with nlist 200 is scanned exactly; before the term it probed 80
// lists of 5,000 rows.
func TestExactRows(t *testing.T) {
	for _, tt := range []struct {
		m, n          int64
		nprobe, nlist int
		ratio         float64
		want          bool
	}{
		{256, 1_000_000, 1, 1000, 4, true},     // few rows: always exact
		{300, 1_000_000, 1, 1000, 4, true},     // σ² = 9e-8 ≤ 2.5e-4
		{2700, 60_000, 8, 980, 4, true},        // Fashion-MNIST lvq8, 4.5 %
		{2800, 60_000, 8, 980, 4, false},       // 4.7 %
		{100_309, 1_000_000, 8, 200, 1, true},  // source lists: 0.01006 ≤ 0.04
		{100_309, 1_000_000, 8, 200, 4, false}, // LVQ lists: 0.01006 > 0.01
		{200_000, 1_000_000, 8, 200, 1, true},  // 0.04 ≤ 0.04
		{300_000, 1_000_000, 8, 200, 1, false}, // 0.09 > 0.04
		{30_000, 60_000, 980, 980, 4, false},   // half the rows, every list: lists
	} {
		if got := exactRows(tt.m, tt.n, tt.nprobe, tt.nlist, tt.ratio); got != tt.want {
			t.Errorf("exactRows(%d of %d, nprobe %d, nlist %d, c %v) = %v, want %v", tt.m, tt.n, tt.nprobe, tt.nlist, tt.ratio, got, tt.want)
		}
	}
}
