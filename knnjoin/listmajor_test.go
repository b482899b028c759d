package knnjoin_test

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/internal/testfix"
	"github.com/parqdb/parqdb/knnjoin"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

// TestJoinListMajor self-joins an index whose LVQ8 codes (20,000 × 448
// bytes, 9 MB) make SearchBatch scan list-major, in batches of 3,000
// queries (the last one shorter): every query's neighbours equal those of
// one SearchBatch over all the rows, keys and distances bit for bit.
func TestJoinListMajor(t *testing.T) {
	testenv.SkipShort(t, "a 20,000 × 448 index build (list-major search)")
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.parquet")
	keys, vecs := testfix.ClusteredVectors(0, 20000, 448, 5, 1)
	if err := testfix.WriteVectors(src, keys, vecs, sourcetest.Options{RowGroupRows: 4096}); err != nil {
		t.Fatal(err)
	}
	w := testfix.NewWarehouse(t, filepath.Join(dir, "wh"))
	if _, err := indexer.Create(ctx, indexer.Env{Warehouse: w.Bucket, Catalog: w.Catalog}, indexer.Options{
		Name: "big", Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 64, Seed: 2,
	}); err != nil {
		t.Fatal(err)
	}
	env := query.Env{Warehouse: w.Bucket, Catalog: w.Catalog}
	out := filepath.Join(dir, "out")
	o := knnjoin.Options{Index: "big", Queries: src, QueryKey: []string{"id"}, QueryVector: "embedding", K: 10, NProbe: 6, Self: true, Output: out}
	if _, _, err := knnjoin.Join(ctx, env, o, knnjoin.RunOptions{BatchQueries: 3000, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	ix, err := query.Open(ctx, env, "big", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	res, err := ix.SearchBatch(ctx, vecs, query.Options{K: 11, NProbe: 6, NoRows: true}, 2)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Query int64   `parquet:"query_id"`
		ID    int64   `parquet:"id"`
		D     float32 `parquet:"_distance"`
		Rank  int32   `parquet:"_rank"`
	}
	b, _ := storage.Open(ctx, out)
	data, err := storage.ReadAll(ctx, b, "part-000000-00000.parquet")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.Read[row](bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64][]row{}
	for _, r := range rows {
		got[r.Query] = append(got[r.Query], r)
	}
	selfFound := 0
	for i, r := range res {
		var want []row
		for _, h := range r.Hits {
			kv, err := source.DecodeKey(ix.KeyTypes(), h.Key)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, row{Query: keys[i], ID: kv[0].Int, D: h.Distance})
		}
		if j := slices.IndexFunc(want, func(w row) bool { return w.ID == keys[i] }); j >= 0 {
			want = slices.Delete(want, j, j+1)
			selfFound++
		} else {
			want = want[:10]
		}
		for j := range want {
			want[j].Rank = int32(j + 1)
		}
		if !slices.Equal(got[keys[i]], want) {
			t.Fatalf("query %d:\n join   %v\n search %v", keys[i], got[keys[i]], want)
		}
	}
	if selfFound < len(res)*9/10 {
		t.Fatalf("only %d of %d queries found themselves", selfFound, len(res))
	}
}
