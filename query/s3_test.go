package query_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

// TestS3MatchesLocal builds the same source (same seed) into a local
// warehouse and into an S3 warehouse over the real S3 server and checks
// that results are equal bit for bit and that a query after open reads
// postings in one round, the join in one more. (The source stays one
// local file for both, so that only the warehouse differs; a source on S3
// is tested in indexer.TestS3SourceAndWarehouse.)
func TestS3MatchesLocal(t *testing.T) {
	ctx := context.Background()
	srv := testenv.S3(t)
	rows := synthRows(9, 0, 3000, 32)
	local := filepath.Join(t.TempDir(), "src.parquet")
	writeSynth(t, local, rows)

	lbenv, lenv := localEnv(t)
	wh, scat := s3Warehouse(t, srv)
	senv := query.Env{Warehouse: wh, Catalog: scat}
	for _, enc := range []string{metadata.EncodingLVQ8, metadata.EncodingSource} {
		t.Run(enc, func(t *testing.T) {
			name := "v" + enc
			for _, e := range []struct {
				env indexer.Env
				src string
			}{{lbenv, local}, {indexer.Env{Warehouse: wh, Catalog: scat}, local}} {
				_, err := indexer.Create(ctx, e.env, indexer.Options{Name: name, Source: e.src, VectorField: "vec",
					KeyFields: []string{"id"}, Encoding: enc, NList: 40, Seed: 3})
				if err != nil {
					t.Fatal(err)
				}
			}
			lix, err := query.Open(ctx, lenv, name, query.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer lix.Close()
			six, err := query.Open(ctx, senv, name, query.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer six.Close()
			opts := query.Options{K: 10, NProbe: 6, Refine: 3, Columns: []string{"id", "label"}}
			if err := six.Warm(ctx, opts); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 20; i++ {
				q := rows[i*97].Vec
				lr, err := lix.Search(ctx, q, opts)
				if err != nil {
					t.Fatal(err)
				}
				wh0, src0 := six.StorageStats()
				sr, err := six.Search(ctx, q, opts)
				if err != nil {
					t.Fatal(err)
				}
				wh1, src1 := six.StorageStats()
				if len(lr.Hits) != len(sr.Hits) {
					t.Fatalf("query %d: %d local hits, %d S3 hits", i, len(lr.Hits), len(sr.Hits))
				}
				for j := range lr.Hits {
					l, s := lr.Hits[j], sr.Hits[j]
					if !bytes.Equal(l.Key, s.Key) || l.Distance != s.Distance || l.Row["label"] != s.Row["label"] {
						t.Fatalf("query %d hit %d: local %x %v %v, S3 %x %v %v", i, j, l.Key, l.Distance, l.Row["label"], s.Key, s.Distance, s.Row["label"])
					}
				}
				st := sr.Stats
				if st.Rounds > 2 {
					t.Fatalf("query %d: %d rounds of reads, want ≤ 2 (%+v)", i, st.Rounds, st)
				}
				// Postings requests happen in the one postings round.
				if got := wh1.Requests - wh0.Requests; got != st.Requests {
					t.Fatalf("query %d: warehouse saw %d requests, the postings round %d", i, got, st.Requests)
				}
				if st.CachedLists < st.Lists && st.Requests == 0 {
					t.Fatalf("query %d: uncached lists but no request", i)
				}
				// Later joins may find their pages in the decoded-page cache.
				if i == 0 && src1.Requests == src0.Requests {
					t.Fatalf("query %d: the join read nothing from the source", i)
				}
				// Keys only: the postings round at most.
				kr, err := six.Search(ctx, rows[i*97+1].Vec, query.Options{K: 10, NProbe: 6, KeysOnly: true})
				if err != nil {
					t.Fatal(err)
				}
				if kr.Stats.Rounds > 1 {
					t.Fatalf("keys-only query %d: %d rounds", i, kr.Stats.Rounds)
				}
			}
		})
	}
}

// s3Warehouse returns a warehouse under prefix "wh" of a new bucket of the
// test S3 server, and the object-store catalog over it.
func s3Warehouse(t *testing.T, srv *testenv.S3Server) (*storage.S3, *catalog.Warehouse) {
	t.Helper()
	wh, err := storage.NewS3(context.Background(), srv.NewBucket(t), "wh",
		storage.S3Endpoint(srv.Endpoint), storage.S3Region(srv.Region), storage.S3Credentials(srv.AccessKey, srv.SecretKey))
	if err != nil {
		t.Fatal(err)
	}
	return wh, catalog.NewWarehouse(wh)
}
