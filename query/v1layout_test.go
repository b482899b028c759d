package query_test

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/parqdb/parqdb/internal/testfix"
	"github.com/parqdb/parqdb/query"
)

// TestV1LayoutSearches: an index written with the version-1 postings
// layout (manifest, key-rows table, calibration and vectors file inside
// the table location; internal/testfix/testdata/v1-layout) opens, finds
// rows by key through its key-rows table, reads its vectors file and its
// calibration, and answers exact top-k with every list probed and refine.
func TestV1LayoutSearches(t *testing.T) {
	ctx := context.Background()
	wh, cat := testfix.OpenV1Layout(t)
	ix, err := query.Open(ctx, query.Env{Warehouse: wh, Catalog: cat}, "v1", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, ok, err := ix.VectorsFileSize(ctx); err != nil || !ok {
		t.Fatalf("vectors file %s: present %v, %v", ix.VectorsFileLocation(), ok, err)
	}
	meta, _ := ix.Metadata()
	if c, err := query.ReadCalibration(ctx, wh, meta.IndexUUID, ix.Snapshot()); err != nil || c == nil {
		t.Fatalf("calibration %s: %v, %v", query.CalibrationLocation(ix.Snapshot()), c, err)
	}
	keys, vecs := testfix.ClusteredVectors(1, 400, 16, 7, 1)
	for _, qi := range []int{0, 57, 399} {
		kv, err := ix.ParseKey([]string{strconv.FormatInt(keys[qi], 10)})
		if err != nil {
			t.Fatal(err)
		}
		q, err := ix.VectorOf(ctx, kv)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(q, vecs[qi]) {
			t.Fatalf("vector of key %d differs from the source's", keys[qi])
		}
		res, err := ix.Search(ctx, q, query.Options{K: 10, NProbe: ix.NList(), Refine: 4, Columns: []string{"id"}})
		if err != nil {
			t.Fatal(err)
		}
		want := bruteForceL2(vecs, q, 10)
		if len(res.Hits) != len(want) {
			t.Fatalf("key %d: %d hits, want %d", keys[qi], len(res.Hits), len(want))
		}
		for j, h := range res.Hits {
			if id := h.Row["id"].(int64); id != keys[want[j]] {
				t.Fatalf("key %d hit %d: id %d, want %d", keys[qi], j, id, keys[want[j]])
			}
		}
	}
}

// bruteForceL2 returns the positions of the k vectors nearest to q by
// squared L2 distance (float64 sums), ties by position.
func bruteForceL2(vecs [][]float32, q []float32, k int) []int {
	d := make([]float64, len(vecs))
	idx := make([]int, len(vecs))
	for i, v := range vecs {
		idx[i] = i
		for j := range v {
			x := float64(v[j]) - float64(q[j])
			d[i] += x * x
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case d[a] < d[b]:
			return -1
		case d[a] > d[b]:
			return 1
		}
		return 0
	})
	return idx[:k]
}
