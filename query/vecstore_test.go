package query_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/internal/testfix"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

// gloveVectorBytes is what the GloVe sample's vectors take in the store.
const gloveVectorBytes = 10000 * 50 * 4

// TestVectorStoreSameResults checks that searches answer the same whether
// the vector store holds every list (filled in one pass), only some (a
// budget of a tenth of the vectors: lists read on demand and evicted,
// refine reading only its candidates) or none (disabled: every vector read
// from the source): same keys, same distances, bit for bit.
func TestVectorStoreSameResults(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		metric, enc string
		refine      int
	}{
		{metadata.MetricL2Squared, metadata.EncodingSource, 0},
		{metadata.MetricCosine, metadata.EncodingSource, 2},
		{metadata.MetricL2Squared, metadata.EncodingLVQ8, 4},
		{metadata.MetricCosine, metadata.EncodingLVQ4, 3},
	} {
		t.Run(fmt.Sprintf("%s/%s/refine%d", tc.metric, tc.enc, tc.refine), func(t *testing.T) {
			f := newFixture(t, tc.metric, tc.enc, 40)
			budgets := map[string]int64{"full": 0, "partial": gloveVectorBytes / 10, "disabled": -1}
			got := map[string][][]query.Hit{}
			for name, b := range budgets {
				ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{VectorCacheBytes: b})
				if err != nil {
					t.Fatal(err)
				}
				for qi := 0; qi < 60; qi++ {
					res, err := ix.Search(ctx, f.vecs[qi*131], query.Options{K: 10, NProbe: 6, Refine: tc.refine, NoRows: true})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					got[name] = append(got[name], res.Hits)
				}
				st := ix.VectorStoreStats()
				switch {
				case name == "full" && !st.Full:
					t.Errorf("full: the store was not filled whole: %+v", st)
				case name == "partial" && tc.enc == metadata.EncodingSource && (st.Full || st.Bytes > st.Budget || st.Bytes == 0):
					t.Errorf("partial: want some lists stored within the budget: %+v", st)
				case name == "partial" && tc.enc != metadata.EncodingSource && (st.Full || st.Bytes != 0):
					// Refine alone reads its candidates' rows, never whole lists.
					t.Errorf("partial refine: want no list stored: %+v", st)
				case name == "disabled" && st.Bytes != 0:
					t.Errorf("disabled: the store holds %d bytes", st.Bytes)
				}
				ix.Close()
			}
			for _, name := range []string{"partial", "disabled"} {
				for qi := range got["full"] {
					a, b := got["full"][qi], got[name][qi]
					if !slices.EqualFunc(a, b, func(x, y query.Hit) bool {
						return string(x.Key) == string(y.Key) && x.Distance == y.Distance
					}) {
						t.Fatalf("query %d: store %s answers differently from the full store:\n%v\n%v", qi, name, b, a)
					}
				}
			}
		})
	}
}

// TestVectorStoreKeepsListsOverBudget: when the vectors do not all fit,
// the lists a query scanned stay in the store, so the same query again
// reads nothing from the source (before the store, every query past the
// budget read its vectors from the source again).
func TestVectorStoreKeepsListsOverBudget(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, metadata.MetricL2Squared, metadata.EncodingSource, 40)
	ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{VectorCacheBytes: gloveVectorBytes / 4})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	opts := query.Options{K: 10, NProbe: 4, NoRows: true}
	q := f.vecs[77]
	if _, err := ix.Search(ctx, q, opts); err != nil {
		t.Fatal(err)
	}
	_, before := ix.StorageStats()
	if _, err := ix.Search(ctx, q, opts); err != nil {
		t.Fatal(err)
	}
	_, after := ix.StorageStats()
	if d := after.BytesRead - before.BytesRead; d != 0 {
		t.Fatalf("the repeated query read %d source bytes; its lists should be in the vector store", d)
	}
	if st := ix.VectorStoreStats(); st.Full || st.Hits == 0 {
		t.Fatalf("want a partial store that served hits, got %+v", st)
	}
}

// TestVectorStoreBudgetUnderConcurrency searches from many goroutines with
// a store budget of an eighth of the vectors and checks, while they run,
// that the store never holds more than its budget. Run with -race.
func TestVectorStoreBudgetUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, metadata.MetricCosine, metadata.EncodingSource, 40)
	budget := int64(gloveVectorBytes / 8)
	ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{VectorCacheBytes: budget})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ref, err := query.Open(ctx, f.env, "words", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	done := make(chan struct{})
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for qi := w; qi < 200; qi += 8 {
				opts := query.Options{K: 5, NProbe: 5, Refine: qi % 3, NoRows: true}
				got, err := ix.Search(ctx, f.vecs[qi*37], opts)
				if err != nil {
					errs <- err
					return
				}
				want, err := ref.Search(ctx, f.vecs[qi*37], opts)
				if err != nil {
					errs <- err
					return
				}
				for i := range want.Hits {
					if string(got.Hits[i].Key) != string(want.Hits[i].Key) || got.Hits[i].Distance != want.Hits[i].Distance {
						errs <- fmt.Errorf("query %d hit %d: %q %v, want %q %v", qi, i, got.Hits[i].Key, got.Hits[i].Distance, want.Hits[i].Key, want.Hits[i].Distance)
						return
					}
				}
			}
		}()
	}
	over := make(chan query.VectorStoreStats, 1)
	go func() {
		defer close(over)
		for {
			select {
			case <-done:
				return
			default:
			}
			if st := ix.VectorStoreStats(); st.Bytes > budget {
				over <- st
				return
			}
		}
	}()
	wg.Wait()
	close(done)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st, ok := <-over; ok {
		t.Fatalf("store over its budget: %+v", st)
	}
	if st := ix.VectorStoreStats(); st.Hits == 0 || st.Misses == 0 || st.Bytes > budget {
		t.Fatalf("want hits and misses within the budget, got %+v", st)
	}
}

// TestSourceAllListsIsExact: on clustered data of a wider dimension than
// the GloVe sample (160, several row groups), the source encoding with
// every list probed answers exactly the brute-force neighbours with their
// exact distances, for both metrics.
func TestSourceAllListsIsExact(t *testing.T) {
	ctx := context.Background()
	const n, d = 3000, 160
	r := rand.New(rand.NewPCG(3, 4))
	centers := make([][]float32, 12)
	for c := range centers {
		centers[c] = make([]float32, d)
		for j := range centers[c] {
			// unequal spread per dimension, as real data has
			centers[c][j] = float32(r.NormFloat64() * float64(1+j%7))
		}
	}
	keys := make([]int64, n)
	vecs := make([][]float32, n)
	for i := range vecs {
		keys[i] = int64(i)
		c := centers[r.IntN(len(centers))]
		vecs[i] = make([]float32, d)
		for j := range vecs[i] {
			vecs[i][j] = c[j] + float32(r.NormFloat64())
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src.parquet")
	var buf bytes.Buffer
	if err := sourcetest.WriteVectors(&buf, keys, vecs, sourcetest.Options{RowGroupRows: 1000}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, metric := range []string{metadata.MetricL2Squared, metadata.MetricCosine} {
		t.Run(metric, func(t *testing.T) {
			wh, err := storage.NewLocal(filepath.Join(dir, metric, "wh"))
			if err != nil {
				t.Fatal(err)
			}
			cat, err := catalog.OpenSQLite(ctx, filepath.Join(dir, metric, "wh", "catalog.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer cat.Close()
			env := query.Env{Warehouse: wh, Catalog: cat}
			if _, err := indexer.Create(ctx, indexer.Env{Warehouse: wh, Catalog: cat}, indexer.Options{
				Name: "p", Source: src, VectorField: "embedding", KeyFields: []string{"id"},
				Metric: metric, Encoding: metadata.EncodingSource, NList: 20,
			}); err != nil {
				t.Fatal(err)
			}
			ix, err := query.Open(ctx, env, "p", query.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			qs := make([][]float32, 40)
			for i := range qs {
				qs[i] = vecs[i*71]
			}
			want, err := ix.ExactBatch(ctx, qs, 10, 1)
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range qs {
				res, err := ix.Search(ctx, q, query.Options{K: 10, NProbe: 20, NoRows: true})
				if err != nil {
					t.Fatal(err)
				}
				for h := range want[i] {
					g, w := res.Hits[h], want[i][h]
					if string(g.Key) != string(w.Key) || g.Distance != w.Distance {
						t.Fatalf("query %d hit %d: %x %v, want %x %v", i, h, g.Key, g.Distance, w.Key, w.Distance)
					}
				}
			}
		})
	}
}

// TestProcessBudgetSharedByIndexes: two indexes opened on one process
// budget (a third of one index's vectors and postings) search from
// several goroutines at once; the budget is never exceeded, both
// indexes' caches hold memory in it, answers equal those of an index with
// no budget pressure, and closing an index gives its bytes back.
func TestProcessBudgetSharedByIndexes(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, metadata.MetricL2Squared, metadata.EncodingSource, 40)
	b := membudget.New(gloveVectorBytes / 3)
	var ixs []*query.Index
	for range 2 {
		ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{Budget: b})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		ixs = append(ixs, ix)
	}
	ref, err := query.Open(ctx, f.env, "words", query.OpenOptions{Budget: membudget.New(1 << 30)})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	done := make(chan struct{})
	over := make(chan int64, 1)
	go func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if u := b.Used(); u > b.Limit() {
				over <- u
				return
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ix := ixs[w%2]
			for qi := w; qi < 120; qi += 4 {
				opts := query.Options{K: 5, NProbe: 6, NoRows: true}
				got, err := ix.Search(ctx, f.vecs[qi*53], opts)
				if err == nil {
					var want *query.Result
					if want, err = ref.Search(ctx, f.vecs[qi*53], opts); err == nil {
						for i := range want.Hits {
							if string(got.Hits[i].Key) != string(want.Hits[i].Key) || got.Hits[i].Distance != want.Hits[i].Distance {
								err = fmt.Errorf("query %d hit %d differs", qi, i)
								break
							}
						}
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	select {
	case u := <-over:
		t.Fatalf("budget exceeded: %d > %d", u, b.Limit())
	default:
	}
	st := b.Stats()
	held := map[string]int64{}
	for _, s := range st {
		held[s.Name] = s.Bytes
	}
	if held["vectors"] == 0 || held["postings"] == 0 || b.Used() > b.Limit() {
		t.Fatalf("want both caches holding memory within the budget: %+v (used %d of %d)", st, b.Used(), b.Limit())
	}
	before := b.Used()
	ixs[0].Close()
	if b.Used() >= before {
		t.Fatalf("closing an index gave nothing back: %d → %d", before, b.Used())
	}
}

// TestColdSourceQueryReadsChunksOnce: a `source` query on an index with no
// vector store and no cache reads the exact vectors of all its probed
// lists from the source in one batched call, so that on a file without an
// offset index (pyarrow's default), where a read decodes a row group's
// vector chunk from its start, a query reads each chunk about once and
// not once per probed list. Its answers are those of a warm index.
func TestColdSourceQueryReadsChunksOnce(t *testing.T) {
	ctx := context.Background()
	const n, dim = 6000, 32
	r := rand.New(rand.NewPCG(41, 2))
	keys := make([]int64, n)
	vecs := make([][]float32, n)
	for i := range vecs {
		keys[i] = int64(i)
		vecs[i] = make([]float32, dim)
		for j := range vecs[i] {
			vecs[i][j] = float32(r.NormFloat64())
		}
	}
	var buf bytes.Buffer
	if err := sourcetest.WriteVectors(&buf, keys, vecs, sourcetest.Options{Codec: &zstd.Codec{}, PageBufferSize: 8 << 10, RowGroupRows: 3000}); err != nil {
		t.Fatal(err)
	}
	data, err := sourcetest.StripPageIndex(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src.parquet")
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	wh := testfix.NewWarehouse(t, filepath.Join(dir, "wh"))
	if _, err := indexer.Create(ctx, indexer.Env{Warehouse: wh.Bucket, Catalog: wh.Catalog}, indexer.Options{
		Name: "cold", Source: src, VectorField: "embedding", KeyFields: []string{"id"},
		Metric: metadata.MetricL2Squared, Encoding: metadata.EncodingSource, NList: 30,
	}); err != nil {
		t.Fatal(err)
	}
	env := query.Env{Warehouse: wh.Bucket, Catalog: wh.Catalog}
	cold, err := query.Open(ctx, env, "cold", query.OpenOptions{CacheBytes: -1, VectorCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer cold.Close()
	warm, err := query.Open(ctx, env, "cold", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer warm.Close()
	opts := query.Options{K: 10, NProbe: 10, NoRows: true}
	for qi := range 3 {
		q := vecs[qi*1999]
		_, before := cold.StorageStats()
		got, err := cold.Search(ctx, q, opts)
		if err != nil {
			t.Fatal(err)
		}
		_, after := cold.StorageStats()
		// Each row group's vector chunk at most once, plus a read buffer
		// of look-ahead per row group and the key columns' pages.
		if read, limit := after.BytesRead-before.BytesRead, int64(len(data)+2*64<<10); read > limit {
			t.Errorf("query %d: a cold query read %d source bytes, want ≤ %d (the file is %d bytes)", qi, read, limit, len(data))
		}
		if got.Stats.SourceVectorRows < int64(n/30*5) {
			t.Errorf("query %d: %d source vector rows read, want the probed lists' (about %d)", qi, got.Stats.SourceVectorRows, n/30*10)
		}
		want, err := warm.Search(ctx, q, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got.Hits, want.Hits, func(x, y query.Hit) bool {
			return string(x.Key) == string(y.Key) && x.Distance == y.Distance
		}) {
			t.Errorf("query %d: the cold index answers %v, the warm one %v", qi, got.Hits, want.Hits)
		}
	}
	// A batch takes a list's vectors once for the queries that probe it
	// (the store keeping none): the same answers.
	qs := [][]float32{vecs[5], vecs[6], vecs[5], vecs[4000]}
	got, err := cold.SearchBatch(ctx, qs, opts, 1)
	if err != nil {
		t.Fatal(err)
	}
	for j, q := range qs {
		want, err := warm.Search(ctx, q, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got[j].Hits, want.Hits, func(x, y query.Hit) bool {
			return string(x.Key) == string(y.Key) && x.Distance == y.Distance
		}) {
			t.Errorf("batch query %d: the cold index answers %v, the warm one %v", j, got[j].Hits, want.Hits)
		}
	}
}
