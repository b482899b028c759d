package query_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
)

// TestOpenWithOwnBudget: a caller outside the module builds a budget with
// NewBudget; an index opened with it charges its caches there, not to
// DefaultBudget, and a budget of 0 keeps nothing.
func TestOpenWithOwnBudget(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "attr.parquet")
	rows := attrRows(500, 8)
	writeAttr(t, src, rows)
	benv, env := localEnv(t)
	buildIndex(t, benv, src, metadata.EncodingLVQ8, 4)
	for _, tc := range []struct {
		limit int64
		used  bool
	}{{1 << 30, true}, {0, false}} {
		b := query.NewBudget(tc.limit)
		if b.Limit() != tc.limit || b == query.DefaultBudget {
			t.Fatalf("NewBudget(%d): limit %d", tc.limit, b.Limit())
		}
		ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{Budget: b})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range filterQueries(rows, 5) {
			if _, err := ix.Search(ctx, q, query.Options{K: 5, NProbe: 4, Columns: []string{"cat"}}); err != nil {
				t.Fatal(err)
			}
		}
		if used := b.Used(); (used > 0) != tc.used || used > tc.limit {
			t.Errorf("budget of %d: %d bytes used after searches", tc.limit, used)
		}
		ix.Close()
	}
}
