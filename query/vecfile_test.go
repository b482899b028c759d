package query_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/vecfile"
)

// vecFileFixture builds the GloVe sample with a vectors file into a
// fresh local warehouse and returns the env, the warehouse folder and the
// vectors file's path on disk.
func vecFileFixture(t *testing.T, name, metric, enc string) (query.Env, string, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	whDir := filepath.Join(dir, "wh")
	wh, err := storage.NewLocal(whDir)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.OpenSQLite(ctx, filepath.Join(whDir, "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	res, err := indexer.Create(ctx, indexer.Env{Warehouse: wh, Catalog: cat}, indexer.Options{
		Name: name, Source: glove, VectorField: "embedding", KeyFields: []string{"word"},
		Metric: metric, Encoding: enc, NList: 40, VectorsFile: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	meta := postings.SnapshotLayout(res.Metadata.CurrentSnapshot()).Meta
	return query.Env{Warehouse: wh, Catalog: cat}, whDir, filepath.Join(whDir, filepath.FromSlash(vecfile.Location(meta)))
}

// searchAll runs a fixed set of queries and settings with refine, with
// the vector store off (so that refine and the source encoding read
// their vectors from the vectors file or the source), and returns the
// results as text, and the source requests the searches made.
func searchAll(t *testing.T, env query.Env, name string) (string, int64, bool) {
	t.Helper()
	return searchAllWith(t, env, name, query.OpenOptions{VectorCacheBytes: -1}, 1)
}

// searchAllWith is searchAll with opts, each query run passes times.
func searchAllWith(t *testing.T, env query.Env, name string, opts query.OpenOptions, passes int) (string, int64, bool) {
	t.Helper()
	ctx := context.Background()
	ix, err := query.Open(ctx, env, name, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	dim := ix.Dim()
	if err := ix.Warm(ctx, query.Options{K: 10, Refine: 2, NoRows: true}); err != nil {
		t.Fatal(err)
	}
	// Warm reads the key → row map only when refine needs it: not when the
	// vectors file serves refine (and the store is not filled whole).
	// (Warm opens the file only when the store will not be filled whole.)
	if query.KeyIndexLoaded(ix) == query.VectorsFileOpen(ix) {
		t.Fatalf("after Warm: key index loaded %v, vectors file open %v", query.KeyIndexLoaded(ix), query.VectorsFileOpen(ix))
	}
	_, before := ix.StorageStats()
	var out strings.Builder
	for qi := 0; qi < 40*passes; qi++ {
		qi := qi % 40
		q := make([]float32, dim)
		for j := range q {
			q[j] = float32((qi*31+j*7)%13-6) * 0.1
		}
		for _, o := range []query.Options{{K: 10, NProbe: 4, Refine: 2}, {K: 5, NProbe: 12, Refine: 6}, {K: 10, NProbe: 8}} {
			o.NoRows = true
			r, err := ix.Search(ctx, q, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range r.Hits {
				fmt.Fprintf(&out, "%d %q %v\n", qi, h.Key, h.Distance)
			}
		}
	}
	_, after := ix.StorageStats()
	return out.String(), after.Requests - before.Requests, query.VectorsFileOpen(ix)
}

// TestVectorsFileSameResults: with the vector store off, searches that read
// exact vectors from the vectors file return exactly (keys and distances,
// bit for bit) what searches that read them from the source return, read
// nothing from the source, and fall back to the source when the file is
// deleted.
func TestVectorsFileSameResults(t *testing.T) {
	for _, tc := range []struct{ metric, enc string }{
		{metadata.MetricCosine, metadata.EncodingLVQ8},
		{metadata.MetricL2Squared, metadata.EncodingLVQ4},
		{metadata.MetricCosine, metadata.EncodingSource},
	} {
		t.Run(tc.metric+"/"+tc.enc, func(t *testing.T) {
			env, _, path := vecFileFixture(t, "words", tc.metric, tc.enc)
			query.SetVectorsFile(false)
			want, srcReqs, open := searchAll(t, env, "words")
			query.SetVectorsFile(true)
			if open || srcReqs == 0 {
				t.Fatalf("without the file: file open %v, %d source requests", open, srcReqs)
			}
			got, srcReqs, open := searchAll(t, env, "words")
			if !open || srcReqs != 0 {
				t.Fatalf("with the file: file open %v, %d source requests (want none)", open, srcReqs)
			}
			if got != want {
				t.Fatalf("results with the vectors file differ from those without")
			}
			// With the block cache, under a budget too small for the vector
			// store: the second pass over the queries hits cached blocks.
			b := membudget.New(1 << 20)
			cached, srcReqs, open := searchAllWith(t, env, "words", query.OpenOptions{Budget: b}, 2)
			if !open || srcReqs != 0 || cached != want+want {
				t.Fatalf("with the block cache: file open %v, %d source requests, same results %v", open, srcReqs, cached == want+want)
			}
			if tc.enc != metadata.EncodingSource {
				var hits, misses int64
				for _, st := range b.Stats() {
					if st.Name == "vectors file" {
						hits, misses = st.Hits, st.Misses
					}
				}
				if hits == 0 || misses == 0 {
					t.Fatalf("block cache: %d hits, %d misses; want both", hits, misses)
				}
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			absent, srcReqs, open := searchAll(t, env, "words")
			if open || srcReqs == 0 || absent != want {
				t.Fatalf("file deleted: file open %v, %d source requests, same results %v", open, srcReqs, absent == want)
			}
		})
	}
}

// TestVectorsFileDamaged: a truncated, damaged or foreign vectors file makes
// refine fail with an error that names the file and wraps ErrCorrupt.
func TestVectorsFileDamaged(t *testing.T) {
	ctx := context.Background()
	env, _, path := vecFileFixture(t, "words", metadata.MetricL2Squared, metadata.EncodingLVQ8)
	_, _, otherPath := vecFileFixture(t, "words", metadata.MetricL2Squared, metadata.EncodingLVQ4)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := os.ReadFile(otherPath)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)-30] ^= 0x10
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", good[:len(good)-100], "vectors-file footer"},
		{"footer damaged", flipped, "footer checksum"},
		{"foreign", foreign, "another manifest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			ix, err := query.Open(ctx, env, "words", query.OpenOptions{VectorCacheBytes: -1})
			if err != nil {
				t.Fatalf("open: %v (the vectors file is not read at open)", err)
			}
			defer ix.Close()
			q := make([]float32, ix.Dim())
			q[0] = 1
			_, err = ix.Search(ctx, q, query.Options{K: 10, NProbe: 4, Refine: 2, NoRows: true})
			if !errors.Is(err, query.ErrCorrupt) || !strings.Contains(err.Error(), vecfile.Name) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("search: %v, want ErrCorrupt naming %s and %q", err, vecfile.Name, tc.want)
			}
			// refine 0 reads no exact vector: unaffected.
			if _, err := ix.Search(ctx, q, query.Options{K: 10, NProbe: 4, NoRows: true}); err != nil {
				t.Fatalf("search without refine: %v", err)
			}
		})
	}
}

// TestS3VectorsFile builds the same source with a vectors file into a
// local warehouse and into an S3 warehouse (the real S3 server) and checks
// that, with the vector store off, refine over S3 reads the vectors file
// (ranged GETs), no source row, and returns what the local index without
// the file returns.
func TestS3VectorsFile(t *testing.T) {
	ctx := context.Background()
	srv := testenv.S3(t)
	rows := synthRows(5, 0, 2000, 24)
	local := filepath.Join(t.TempDir(), "src.parquet")
	writeSynth(t, local, rows)
	lbenv, lenv := localEnv(t)
	wh, scat := s3Warehouse(t, srv)
	senv := query.Env{Warehouse: wh, Catalog: scat}
	for _, e := range []struct {
		env indexer.Env
		vf  bool
	}{{lbenv, false}, {indexer.Env{Warehouse: wh, Catalog: scat}, true}} {
		_, err := indexer.Create(ctx, e.env, indexer.Options{Name: "v", Source: local, VectorField: "vec",
			KeyFields: []string{"id"}, NList: 30, Seed: 3, VectorsFile: e.vf})
		if err != nil {
			t.Fatal(err)
		}
	}
	opts := query.OpenOptions{VectorCacheBytes: -1}
	lix, err := query.Open(ctx, lenv, "v", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer lix.Close()
	six, err := query.Open(ctx, senv, "v", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer six.Close()
	_, src0 := six.StorageStats()
	for i := 0; i < 20; i++ {
		o := query.Options{K: 10, NProbe: 5, Refine: 3, NoRows: true}
		lr, err := lix.Search(ctx, rows[i*89].Vec, o)
		if err != nil {
			t.Fatal(err)
		}
		sr, err := six.Search(ctx, rows[i*89].Vec, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(lr.Hits) != len(sr.Hits) {
			t.Fatalf("query %d: %d local hits, %d S3 hits", i, len(lr.Hits), len(sr.Hits))
		}
		for j := range lr.Hits {
			if !bytes.Equal(lr.Hits[j].Key, sr.Hits[j].Key) || lr.Hits[j].Distance != sr.Hits[j].Distance {
				t.Fatalf("query %d hit %d: local %x %v, S3 %x %v", i, j, lr.Hits[j].Key, lr.Hits[j].Distance, sr.Hits[j].Key, sr.Hits[j].Distance)
			}
		}
	}
	if _, src1 := six.StorageStats(); !query.VectorsFileOpen(six) || src1.Requests != src0.Requests {
		t.Fatalf("S3 index: vectors file open %v, %d source requests during the searches", query.VectorsFileOpen(six), src1.Requests-src0.Requests)
	}
	if query.VectorsFileOpen(lix) {
		t.Fatal("local index without a vectors file opened one")
	}
}

// TestVectorsFileConcurrent: four goroutines refine through one index's
// vectors file and its block cache under a budget that holds a few dozen
// blocks (constant eviction), and get what one goroutine gets reading the
// source; the budget is never exceeded.
func TestVectorsFileConcurrent(t *testing.T) {
	ctx := context.Background()
	env, _, _ := vecFileFixture(t, "words", metadata.MetricL2Squared, metadata.EncodingLVQ8)
	query.SetVectorsFile(false)
	ref, err := query.Open(ctx, env, "words", query.OpenOptions{VectorCacheBytes: -1})
	query.SetVectorsFile(true)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	dim := ref.Dim()
	qs := make([][]float32, 40)
	want := make([]string, len(qs))
	opts := query.Options{K: 10, NProbe: 6, Refine: 4, NoRows: true}
	for i := range qs {
		qs[i] = make([]float32, dim)
		for j := range qs[i] {
			qs[i][j] = float32((i*17+j*5)%11-5) * 0.1
		}
		r, err := ref.Search(ctx, qs[i], opts)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = fmt.Sprint(keysOf(r.Hits), r.Hits)
	}
	const limit = 256 << 10
	b := membudget.New(limit)
	ix, err := query.Open(ctx, env, "words", query.OpenOptions{Budget: b, CacheBytes: 128 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	errs := make(chan error, 4)
	for w := range 4 {
		go func() {
			for i := w; i < 4*len(qs); i += 4 {
				r, err := ix.Search(ctx, qs[i%len(qs)], opts)
				if err != nil {
					errs <- err
					return
				}
				if got := fmt.Sprint(keysOf(r.Hits), r.Hits); got != want[i%len(qs)] {
					errs <- fmt.Errorf("query %d: %s, want %s", i%len(qs), got, want[i%len(qs)])
					return
				}
				if u := b.Used(); u > limit {
					errs <- fmt.Errorf("%d bytes charged, budget %d", u, limit)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if !query.VectorsFileOpen(ix) {
		t.Fatal("the vectors file was not used")
	}
	for _, st := range b.Stats() {
		if st.Name == "vectors file" && st.Evictions == 0 {
			t.Errorf("block cache: no eviction under a %d-byte budget (%+v)", limit, st)
		}
	}
}

// TestVectorsFilePackedLists checks refine of a filtered search whose
// candidates come from packed per-predicate lists (filtered search's list
// plan) when their exact vectors come from the vectors file: a packed row
// is read at its postings row, so the answers equal those without packing
// and those read from the source.
func TestVectorsFilePackedLists(t *testing.T) {
	env, _, _ := vecFileFixture(t, "packedvf", metadata.MetricL2Squared, metadata.EncodingLVQ8)
	ctx := context.Background()
	p, err := filter.Parse("word >= 'm'")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	qs := make([][]float32, 20)
	for i := range qs {
		qs[i] = make([]float32, 50)
		for j := range qs[i] {
			qs[i][j] = float32(rng.NormFloat64())
		}
	}
	run := func(packed int64, file bool) string {
		t.Helper()
		defer query.SetMaxPackedBytes(query.SetMaxPackedBytes(packed))
		defer query.SetVectorsFile(true)
		query.SetVectorsFile(file)
		ix, err := query.Open(ctx, env, "packedvf", query.OpenOptions{VectorCacheBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		var out strings.Builder
		for pass := range 2 { // the second pass scores the packed lists
			out.Reset()
			for _, q := range qs {
				res, err := ix.Search(ctx, q, query.Options{K: 10, NProbe: 6, Refine: 3, Filter: p, NoRows: true})
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range res.Hits {
					fmt.Fprintf(&out, "%x %g\n", h.Key, h.Distance)
				}
				out.WriteString("--\n")
			}
			if n, _ := query.PackedLists(ix, p); pass == 1 && (n > 0) != (packed > 0) {
				t.Fatalf("packed bound %d: %d lists packed", packed, n)
			}
			if pass == 1 && query.VectorsFileOpen(ix) != file {
				t.Fatalf("vectors file open %v, want %v", query.VectorsFileOpen(ix), file)
			}
		}
		return out.String()
	}
	want := run(0, false)
	for _, tc := range []struct {
		packed int64
		file   bool
	}{{0, true}, {64 << 20, true}, {64 << 20, false}} {
		if got := run(tc.packed, tc.file); got != want {
			t.Errorf("packed bound %d, vectors file %v: results differ from unpacked, from the source:\n%s\nwant\n%s", tc.packed, tc.file, got, want)
		}
	}
}

// TestVectorsFileStats: Stats counts the vectors file's ranged reads
// (VectorFileRequests, VectorFileBytes) apart from the postings', and the
// source rows read for exact vectors (SourceVectorRows): with the vector
// store and the block cache off every refined candidate's row is read from
// the file; with the block cache, a repeated query reads nothing more;
// without the file the rows come from the source.
func TestVectorsFileStats(t *testing.T) {
	ctx := context.Background()
	for _, enc := range []string{metadata.EncodingLVQ8, metadata.EncodingSource} {
		t.Run(enc, func(t *testing.T) {
			env, _, _ := vecFileFixture(t, "words", metadata.MetricL2Squared, enc)
			search := func(ix *query.Index, q []float32) query.Stats {
				t.Helper()
				r, err := ix.Search(ctx, q, query.Options{K: 10, NProbe: 6, Refine: 3, NoRows: true})
				if err != nil {
					t.Fatal(err)
				}
				return r.Stats
			}
			ix, err := query.Open(ctx, env, "words", query.OpenOptions{VectorCacheBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			dim := int64(ix.Dim())
			if size, ok, err := ix.VectorsFileSize(ctx); err != nil || !ok || size < 400*dim*4 {
				t.Fatalf("VectorsFileSize: %d, %v, %v", size, ok, err)
			}
			q := make([]float32, dim)
			for j := range q {
				q[j] = float32(j%7-3) * 0.1
			}
			st := search(ix, q)
			// every exact vector scored came from the file: at least its
			// row's bytes (blocks cover whole rows)
			rows := st.Refined
			if enc == metadata.EncodingSource {
				rows = st.Candidates
			}
			if rows == 0 || st.VectorFileRequests == 0 || st.VectorFileBytes < rows*dim*4 || st.SourceVectorRows != 0 {
				t.Fatalf("store and block cache off: %d rows scored exactly, %d file requests, %d file bytes (want ≥ %d), %d source rows",
					rows, st.VectorFileRequests, st.VectorFileBytes, rows*dim*4, st.SourceVectorRows)
			}
			var sum query.Stats
			sum.Add(st)
			sum.Add(st)
			if sum.VectorFileRequests != 2*st.VectorFileRequests || sum.VectorFileBytes != 2*st.VectorFileBytes {
				t.Fatalf("Stats.Add: %+v from twice %+v", sum, st)
			}

			// Block cache on, store too small to hold the index: the
			// repeated query finds every block cached.
			if enc != metadata.EncodingSource {
				cix, err := query.Open(ctx, env, "words", query.OpenOptions{Budget: membudget.New(1 << 20)})
				if err != nil {
					t.Fatal(err)
				}
				defer cix.Close()
				cold := search(cix, q)
				warm := search(cix, q)
				if cold.VectorFileRequests == 0 || warm.VectorFileRequests != 0 || warm.VectorFileBytes != 0 || warm.Refined == 0 {
					t.Fatalf("block cache: cold %d requests, warm %d requests %d bytes (want 0) for %d refined",
						cold.VectorFileRequests, warm.VectorFileRequests, warm.VectorFileBytes, warm.Refined)
				}
			}

			query.SetVectorsFile(false)
			defer query.SetVectorsFile(true)
			nix, err := query.Open(ctx, env, "words", query.OpenOptions{VectorCacheBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer nix.Close()
			if _, ok, err := nix.VectorsFileSize(ctx); ok || err != nil {
				t.Fatalf("VectorsFileSize without the file: %v, %v", ok, err)
			}
			st = search(nix, q)
			if st.VectorFileRequests != 0 || st.VectorFileBytes != 0 || st.SourceVectorRows < rows {
				t.Fatalf("without the file: %d file requests, %d file bytes, %d source rows (want ≥ %d)",
					st.VectorFileRequests, st.VectorFileBytes, st.SourceVectorRows, rows)
			}
		})
	}
}
