package query_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// synthRow is one row of the seeded synthetic source.
type synthRow struct {
	ID    int64     `parquet:"id"`
	Label string    `parquet:"label"`
	Vec   []float32 `parquet:"vec,list"`
}

// synthRows returns n seeded rows of dimension d drawn from a Gaussian
// mixture of 20 components (clustered like real embeddings).
func synthRows(seed uint64, first, n, d int) []synthRow {
	r := rand.New(rand.NewPCG(seed, 99))
	centers := make([][]float32, 20)
	cr := rand.New(rand.NewPCG(7, 7))
	for i := range centers {
		centers[i] = make([]float32, d)
		for j := range centers[i] {
			centers[i][j] = float32(cr.NormFloat64() * 4)
		}
	}
	rows := make([]synthRow, n)
	for i := range rows {
		c := centers[r.IntN(len(centers))]
		v := make([]float32, d)
		for j := range v {
			v[j] = c[j] + float32(r.NormFloat64())
		}
		rows[i] = synthRow{ID: int64(first + i), Label: fmt.Sprintf("row-%d", first+i), Vec: v}
	}
	return rows
}

func writeSynth(t testing.TB, path string, rows []synthRow) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows, parquet.MaxRowsPerRowGroup(512)); err != nil {
		t.Fatal(err)
	}
	if path != "" {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// localEnv returns a fresh local warehouse with a SQLite catalog.
func localEnv(t testing.TB) (indexer.Env, query.Env) {
	t.Helper()
	dir := t.TempDir()
	wh, err := storage.NewLocal(filepath.Join(dir, "wh"))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.OpenSQLite(context.Background(), filepath.Join(dir, "wh", "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return indexer.Env{Warehouse: wh, Catalog: cat}, query.Env{Warehouse: wh, Catalog: cat}
}

func buildIndex(t testing.TB, env indexer.Env, src, enc string, nlist int) {
	t.Helper()
	_, err := indexer.Create(context.Background(), env, indexer.Options{
		Name: "vecs", Source: src, VectorField: "vec", KeyFields: []string{"id"},
		Encoding: enc, NList: nlist, Seed: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
}

func keysOf(hits []query.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = string(h.Key)
	}
	return out
}

// TestSeededRecall checks recall@10 against ExactBatch (itself checked
// against a float64 brute force) on seeded synthetic data: 1.0 with every
// list probed for source and for lvq8 with refine, and a sane curve.
func TestSeededRecall(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "synth.parquet")
	rows := synthRows(1, 0, 3000, 24)
	writeSynth(t, src, rows)
	for _, enc := range []string{metadata.EncodingSource, metadata.EncodingLVQ8, metadata.EncodingLVQ4} {
		t.Run(enc, func(t *testing.T) {
			benv, env := localEnv(t)
			buildIndex(t, benv, src, enc, 30)
			ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			var qs [][]float32
			for i := 0; i < 60; i++ {
				q := append([]float32(nil), rows[i*41].Vec...)
				for j := range q {
					q[j] += 0.3 * float32(math.Sin(float64(i*j)))
				}
				qs = append(qs, q)
			}
			truth, err := ix.ExactBatch(ctx, qs, 10, 0)
			if err != nil {
				t.Fatal(err)
			}
			// ExactBatch against a plain float64 brute force.
			for qi, q := range qs[:5] {
				best, bestD := -1, math.Inf(1)
				for i, r := range rows {
					var s float64
					for j := range q {
						d := float64(q[j]) - float64(r.Vec[j])
						s += d * d
					}
					if s < bestD {
						best, bestD = i, s
					}
				}
				key, _ := ix.KeyAt(ctx, int64(best))
				if !bytes.Equal(truth[qi][0].Key, key) || float32(bestD) != truth[qi][0].Distance {
					t.Fatalf("query %d: ExactBatch first %x %v, brute force row %d %v", qi, truth[qi][0].Key, truth[qi][0].Distance, best, bestD)
				}
			}
			recallAt := func(nprobe, refine int) float64 {
				res, err := ix.SearchBatch(ctx, qs, query.Options{K: 10, NProbe: nprobe, Refine: refine, NoRows: true}, 0)
				if err != nil {
					t.Fatal(err)
				}
				found := 0
				for qi, r := range res {
					want := map[string]bool{}
					for _, k := range keysOf(truth[qi]) {
						want[k] = true
					}
					for _, h := range r.Hits {
						if want[string(h.Key)] {
							found++
						}
					}
				}
				return float64(found) / float64(10*len(qs))
			}
			refine := 0
			if enc != metadata.EncodingSource {
				refine = 10
			}
			if r := recallAt(30, refine); r != 1.0 {
				t.Errorf("recall@10 with all lists (refine %d) = %.4f, want 1", refine, r)
			}
			if r1, r8 := recallAt(1, refine), recallAt(8, refine); r1 > r8 || r8 < 0.8 {
				t.Errorf("recall@10 nprobe 1 = %.3f, nprobe 8 = %.3f: want non-decreasing and ≥ 0.8 at 8", r1, r8)
			}
			// Exact encodings report exact distances, equal to ExactBatch's.
			if enc == metadata.EncodingSource {
				res, err := ix.Search(ctx, qs[0], query.Options{K: 10, NProbe: 30, NoRows: true})
				if err != nil {
					t.Fatal(err)
				}
				for i, h := range res.Hits {
					if h.Distance != truth[0][i].Distance || !bytes.Equal(h.Key, truth[0][i].Key) {
						t.Fatalf("hit %d: %x %v, exact %x %v", i, h.Key, h.Distance, truth[0][i].Key, truth[0][i].Distance)
					}
				}
			}
		})
	}
}

// TestNearKeyComesFirst: the row itself is the first hit even at nprobe 1.
func TestNearKeyComesFirst(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, metadata.MetricCosine, metadata.EncodingLVQ8, 100)
	ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for i := 0; i < len(f.keys); i += 331 {
		vals, err := ix.ParseKey([]string{f.keys[i]})
		if err != nil {
			t.Fatal(err)
		}
		res, err := ix.SearchNearKey(ctx, vals, query.Options{K: 3, NProbe: 1, Columns: []string{"word"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Hits[0].Row["word"]; got != f.keys[i] {
			t.Fatalf("near %q: first hit %v", f.keys[i], got)
		}
	}
	if _, err := ix.ParseKey([]string{"a", "b"}); !errors.Is(err, query.ErrBadQuery) {
		t.Fatalf("two values for one key field: %v", err)
	}
	vals, _ := ix.ParseKey([]string{"no-such-word-xyz"})
	if _, err := ix.SearchNearKey(ctx, vals, query.Options{}); !errors.Is(err, query.ErrKeyNotFound) {
		t.Fatalf("missing key: %v", err)
	}
}

// TestConcurrentSearch: many goroutines on one index give the sequential
// answers (run with -race in CI's race target).
func TestConcurrentSearch(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, metadata.MetricL2Squared, metadata.EncodingLVQ8, 40)
	ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{CacheBytes: 200 << 10}) // small: evictions happen
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	opts := query.Options{K: 5, NProbe: 6, Refine: 2, Columns: []string{"word"}}
	want := make([][]string, 40)
	for i := range want {
		r, err := ix.Search(ctx, f.vecs[i*13], opts)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = keysOf(r.Hits)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range want {
				i := (i + g*5) % len(want)
				r, err := ix.Search(ctx, f.vecs[i*13], opts)
				if err != nil {
					errs <- err
					return
				}
				if got := keysOf(r.Hits); strings.Join(got, "|") != strings.Join(want[i], "|") {
					errs <- fmt.Errorf("query %d: %q, want %q", i, got, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestSnapshotTimeTravel: after a successor snapshot (a retrained rebuild
// over the same source), the old snapshot still answers as before.
func TestSnapshotTimeTravel(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "s.parquet")
	rows := synthRows(5, 0, 2000, 16)
	writeSynth(t, src, rows)
	benv, env := localEnv(t)
	buildIndex(t, benv, src, metadata.EncodingLVQ8, 20)
	search := func(snap int64) ([][]string, [][]float32, int64) {
		ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{SnapshotID: snap})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		var keys [][]string
		var dists [][]float32
		for i := 0; i < 30; i++ {
			r, err := ix.Search(ctx, rows[i*61].Vec, query.Options{K: 10, NProbe: 1, KeysOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, keysOf(r.Hits))
			var ds []float32
			for _, h := range r.Hits {
				ds = append(ds, h.Distance)
			}
			dists = append(dists, ds)
		}
		return keys, dists, ix.Snapshot().SnapshotID
	}
	k1, d1, id1 := search(0)
	if _, err := indexer.Refresh(ctx, benv, "vecs", indexer.RefreshOptions{Retrain: true, Seed: 77}); err != nil {
		t.Fatal(err)
	}
	k2, d2, id2 := search(0)
	if id2 == id1 {
		t.Fatalf("refresh committed no new snapshot (%d)", id2)
	}
	if fmt.Sprint(k1, d1) == fmt.Sprint(k2, d2) {
		t.Fatalf("the retrained snapshot answers exactly like the old one: the test cannot tell them apart")
	}
	k1b, d1b, id1b := search(id1)
	if id1b != id1 || fmt.Sprint(k1, d1) != fmt.Sprint(k1b, d1b) {
		t.Fatalf("snapshot %d searched after the successor answers differently", id1)
	}
	if _, err := query.Open(ctx, env, "vecs", query.OpenOptions{SnapshotID: 999}); !errors.Is(err, query.ErrNoSnapshot) {
		t.Fatalf("unknown snapshot: %v", err)
	}
}

// TestRowCache: a repeated query is answered from the list and row caches
// (no storage round), with equal rows, and a caller changing a returned
// row does not change later answers. (It asks for a list column, which
// the row group column cache of scalar joins does not hold.)
func TestRowCache(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, metadata.MetricL2Squared, metadata.EncodingLVQ8, 20)
	for _, rows := range []int{0, -1} {
		ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{RowCacheRows: rows})
		if err != nil {
			t.Fatal(err)
		}
		opts := query.Options{K: 5, NProbe: 3, Columns: []string{"word", "rank", "embedding"}}
		a, err := ix.Search(ctx, f.vecs[7], opts)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprint(a.Hits[0].Row)
		a.Hits[0].Row["word"] = "changed"
		b, err := ix.Search(ctx, f.vecs[7], opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(b.Hits[0].Row); got != want {
			t.Fatalf("row cache %d: second answer %s, want %s", rows, got, want)
		}
		wantRounds := int64(0)
		if rows < 0 {
			wantRounds = 1
		}
		if b.Stats.Rounds != wantRounds {
			t.Fatalf("row cache %d: repeated query made %d rounds, want %d", rows, b.Stats.Rounds, wantRounds)
		}
		ix.Close()
	}
}

// TestRowCacheShared: with SharedRows a cached row is answered as the
// cache's own map (two answers share it) holding what a copied answer
// holds; without it every answer gets its own map. Both for joined source
// columns and for key columns only (decoded from the postings keys, cached
// by list and row).
func TestRowCacheShared(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, metadata.MetricL2Squared, metadata.EncodingLVQ8, 20)
	ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, cols := range [][]string{{"word", "rank", "embedding"}, {"word"}} {
		t.Run(strings.Join(cols, ","), func(t *testing.T) {
			opts := query.Options{K: 5, NProbe: 3, Columns: cols}
			search := func(shared bool) *query.Result {
				o := opts
				o.SharedRows = shared
				r, err := ix.Search(ctx, f.vecs[7], o)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			search(false) // fills the row cache (joined columns)
			search(true)  // (key columns)
			copied, s1, s2 := search(false), search(true), search(true)
			same := func(a, b map[string]any) bool {
				return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
			}
			for i := range copied.Hits {
				if !reflect.DeepEqual(copied.Hits[i].Row, s1.Hits[i].Row) || len(s1.Hits[i].Row) != len(cols) {
					t.Fatalf("hit %d: shared row %v, copied row %v", i, s1.Hits[i].Row, copied.Hits[i].Row)
				}
				if !same(s1.Hits[i].Row, s2.Hits[i].Row) {
					t.Errorf("hit %d: two SharedRows answers got different maps", i)
				}
				if same(copied.Hits[i].Row, s1.Hits[i].Row) {
					t.Errorf("hit %d: an answer without SharedRows got the cached map", i)
				}
			}
		})
	}
}
