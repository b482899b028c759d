package query_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
)

// TestJoinKeyColumnsReadsNoSource: a join that asks only for key columns
// is answered from the keys in the postings, reading no source byte
// (before, it built the key index and read the rows' pages: 10k queries
// with --columns id read 1.38 GB of Fashion-MNIST's source), with the
// values of a join that reads them.
func TestJoinKeyColumnsReadsNoSource(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "attr.parquet")
	rows := attrRows(2000, 8)
	writeAttr(t, src, rows)
	benv, env := localEnv(t)
	buildIndex(t, benv, src, metadata.EncodingLVQ8, 20)
	ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for qi, q := range filterQueries(rows, 5) {
		_, src0 := ix.StorageStats()
		keys, err := ix.Search(ctx, q, query.Options{K: 10, Columns: []string{"id"}})
		if err != nil {
			t.Fatal(err)
		}
		_, src1 := ix.StorageStats()
		if src1.BytesRead != src0.BytesRead || src1.Requests != src0.Requests {
			t.Errorf("query %d, columns id: %d source bytes in %d requests read, want none",
				qi, src1.BytesRead-src0.BytesRead, src1.Requests-src0.Requests)
		}
		full, err := ix.Search(ctx, q, query.Options{K: 10, Columns: []string{"bucket", "id"}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(keys.Columns, []string{"id", "_distance"}) || len(keys.Hits) != 10 || len(full.Hits) != 10 {
			t.Fatalf("query %d: columns %v, %d and %d hits", qi, keys.Columns, len(keys.Hits), len(full.Hits))
		}
		for i, h := range keys.Hits {
			id, ok := h.Row["id"].(int64)
			if len(h.Row) != 1 || !ok || id != full.Hits[i].Row["id"].(int64) || string(h.Key) != string(full.Hits[i].Key) {
				t.Errorf("query %d hit %d: %v, the joined row says %v", qi, i, h.Row, full.Hits[i].Row)
			}
		}
	}
}
