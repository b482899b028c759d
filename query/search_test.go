package query_test

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/lvq"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

const glove = "../examples/glove/glove-10k.parquet"

type fixture struct {
	env  query.Env
	keys []string
	vecs [][]float32
}

// newFixture builds the GloVe sample into a fresh local warehouse.
func newFixture(t testing.TB, metric, enc string, nlist int) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	wh, err := storage.NewLocal(filepath.Join(dir, "wh"))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.OpenSQLite(ctx, filepath.Join(dir, "wh", "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	_, err = indexer.Create(ctx, indexer.Env{Warehouse: wh, Catalog: cat}, indexer.Options{
		Name: "words", Source: glove, VectorField: "embedding", KeyFields: []string{"word"},
		Metric: metric, Encoding: enc, NList: nlist,
	})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{env: query.Env{Warehouse: wh, Catalog: cat}}
	tab, _, err := source.OpenLocation(ctx, glove)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	l, err := tab.Check(ctx, source.Binding{VectorField: "embedding", KeyFields: []string{"word"}, Metric: metric})
	if err != nil {
		t.Fatal(err)
	}
	err = tab.Scan(ctx, l, 0, func(b *source.Batch) error {
		for i := 0; i < b.N; i++ {
			f.keys = append(f.keys, string(b.Key(i)[0].Bytes))
			f.vecs = append(f.vecs, slices.Clone(b.Vector(i)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// exact returns the k nearest words to q by brute force (q and vectors
// canonical: normalised under cosine).
func (f *fixture) exact(q []float32, k int) []string {
	type kd struct {
		key string
		d   float64
	}
	all := make([]kd, len(f.vecs))
	for i, v := range f.vecs {
		var s float64
		for j := range v {
			d := float64(q[j]) - float64(v[j])
			s += d * d
		}
		all[i] = kd{f.keys[i], s}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].d != all[j].d {
			return all[i].d < all[j].d
		}
		return all[i].key < all[j].key
	})
	out := make([]string, k)
	for i := range out {
		out[i] = all[i].key
	}
	return out
}

func recall(got []query.Hit, want []string) float64 {
	set := map[string]bool{}
	for _, w := range want {
		set[w] = true
	}
	n := 0
	for _, h := range got {
		if set[h.Row["word"].(string)] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

func TestRecallAllListsIsExact(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		metric, enc string
		refine      int
	}{
		{metadata.MetricL2Squared, metadata.EncodingSource, 0},
		{metadata.MetricL2Squared, metadata.EncodingLVQ8, 4},
		{metadata.MetricCosine, metadata.EncodingSource, 0},
		{metadata.MetricCosine, metadata.EncodingLVQ8, 4},
		{metadata.MetricCosine, metadata.EncodingLVQ4, 10},
	} {
		t.Run(tc.metric+"/"+tc.enc, func(t *testing.T) {
			f := newFixture(t, tc.metric, tc.enc, 50)
			ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			var total float64
			const nq = 40
			for qi := 0; qi < nq; qi++ {
				q := f.vecs[qi*97]
				res, err := ix.Search(ctx, q, query.Options{K: 10, NProbe: 50, Refine: tc.refine, Columns: []string{"word", "rank"}})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Hits) != 10 {
					t.Fatalf("got %d hits", len(res.Hits))
				}
				if res.Hits[0].Row["word"] != f.keys[qi*97] {
					t.Fatalf("query %q: first hit %v, want the word itself", f.keys[qi*97], res.Hits[0].Row["word"])
				}
				want := f.exact(q, 10)
				total += recall(res.Hits, want)
				// exact distances are reported for exact vectors
				if tc.refine > 0 || tc.enc == metadata.EncodingSource {
					w := f.vecs[slices.Index(f.keys, want[1])]
					d := 0.0
					for j := range q {
						x := float64(q[j]) - float64(w[j])
						d += x * x
					}
					if tc.metric == metadata.MetricCosine {
						d /= 2
					}
					if math.Abs(float64(res.Hits[1].Distance)-d) > 1e-6*math.Max(1, d) {
						t.Fatalf("distance of %s: got %v, want %v", want[1], res.Hits[1].Distance, d)
					}
				}
			}
			if r := total / nq; r != 1.0 {
				t.Fatalf("recall@10 with all lists = %.4f, want 1.0", r)
			}
		})
	}
}

func TestSearchValidatesQuery(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, metadata.MetricL2Squared, metadata.EncodingLVQ8, 20)
	ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	nan := slices.Clone(f.vecs[0])
	nan[3] = float32(math.NaN())
	for name, tc := range map[string]struct {
		q    []float32
		opts query.Options
	}{
		"wrong dimension": {f.vecs[0][:10], query.Options{}},
		"NaN":             {nan, query.Options{}},
		"k too large":     {f.vecs[0], query.Options{K: query.MaxK + 1}},
		"negative k":      {f.vecs[0], query.Options{K: -1}},
		"negative nprobe": {f.vecs[0], query.Options{NProbe: -3}},
		"refine too big":  {f.vecs[0], query.Options{Refine: query.MaxRefine + 1}},
		"nprobe too big":  {f.vecs[0], query.Options{NProbe: query.MaxNProbe + 1}},
	} {
		if _, err := ix.Search(ctx, tc.q, tc.opts); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	_ = lvq.ErrZeroNorm
}
