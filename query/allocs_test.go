package query_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
)

// TestSearchAllocs holds a warm Search without rows (NoRows) to one allocation, the
// Result, for every scan: the exact source scan, LVQ8 with and without
// refine, LVQ4. A kernel that grows a buffer per query (the source scan's
// first-list bound once did) fails it.
func TestSearchAllocs(t *testing.T) {
	testenv.SkipShort(t, "an index build per encoding")
	if testenv.RaceDetector {
		t.Skip("the race detector's instrumentation allocates")
	}
	ctx := context.Background()
	for _, tc := range []struct {
		enc    string
		refine int
	}{
		{metadata.EncodingSource, 0},
		{metadata.EncodingLVQ8, 0},
		{metadata.EncodingLVQ8, 4},
		{metadata.EncodingLVQ4, 4},
	} {
		t.Run(fmt.Sprintf("%s-refine%d", tc.enc, tc.refine), func(t *testing.T) {
			f := newFixture(t, metadata.MetricCosine, tc.enc, 100)
			ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			opts := query.Options{K: 10, NProbe: 10, Refine: tc.refine, NoRows: true}
			qi := 0
			search := func() {
				qi = (qi + 37) % len(f.vecs)
				if _, err := ix.Search(ctx, f.vecs[qi], opts); err != nil {
					t.Fatal(err)
				}
			}
			for range 200 { // load the lists and vectors, grow the scratch
				search()
			}
			if n := testing.AllocsPerRun(200, search); n > 1 {
				t.Errorf("refine %d: %.2f allocations per warm Search, want 1 (the Result)", tc.refine, n)
			}
		})
	}
}
