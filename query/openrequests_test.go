package query_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

// TestS3OpenRequestsConstant opens, over the real S3 server, a tiny index
// (one postings file) and a larger one with many postings files, and
// checks that Open sends the same number of requests to each: the
// manifest gives every file's size, so no file is HEADed, and the key →
// row map is not read at open. Requests to the source (one footer read per
// file) count too. Then a query over the many-file index
// still reads its postings and joins its rows.
func TestS3OpenRequestsConstant(t *testing.T) {
	ctx := context.Background()
	srv := testenv.S3(t)
	wh, cat := s3Warehouse(t, srv)
	dir := t.TempDir()
	cases := []struct {
		name               string
		rows, nlist, roots int
		minFiles           int
	}{
		{"tiny", 2000, 4, 1, 1}, // a source file over 64 KiB, like the other's
		{"many", 10000, 256, 64, 40},
	}
	opens := make([]int64, len(cases))
	logs := make([]string, len(cases))
	for i, c := range cases {
		src := filepath.Join(dir, c.name+".parquet")
		rows := synthRows(uint64(i+1), 0, c.rows, 16)
		writeSynth(t, src, rows)
		res, err := indexer.Create(ctx, indexer.Env{Warehouse: wh, Catalog: cat}, indexer.Options{Name: c.name, Source: src,
			VectorField: "vec", KeyFields: []string{"id"}, NList: c.nlist, Roots: c.roots, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		lb := &logBucket{Bucket: wh}
		cwh, counts := storage.WithStats(lb)
		ix, err := query.Open(ctx, query.Env{Warehouse: cwh, Catalog: catalog.NewWarehouse(cwh)}, c.name, query.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		loc := res.Metadata.CurrentSnapshot().IndexTables[metadata.RolePostings].Properties["location"]
		objs, err := wh.List(ctx, loc+"bucket-")
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) < c.minFiles {
			t.Fatalf("%s: %d postings files, want ≥ %d for this test to mean anything", c.name, len(objs), c.minFiles)
		}
		whStats, srcStats := ix.StorageStats()
		opens[i] = counts.Snapshot().Requests + srcStats.Requests
		logs[i] = strings.Join(lb.ops, "\n")
		t.Logf("%s: %d rows, %d postings files: open sent %d requests (warehouse %d with the catalog, %d by the index; source %d)",
			c.name, c.rows, len(objs), opens[i], counts.Snapshot().Requests, whStats.Requests, srcStats.Requests)
		// The index still answers, joining source rows.
		r, err := ix.Search(ctx, rows[7].Vec, query.Options{K: 5, NProbe: 8, Columns: []string{"id"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Hits) != 5 || fmt.Sprint(r.Hits[0].Row["id"]) != fmt.Sprint(rows[7].ID) {
			t.Fatalf("%s: hits %+v, want 5 with id %d first", c.name, r.Hits, rows[7].ID)
		}
		ix.Close()
	}
	if opens[0] != opens[1] {
		t.Fatalf("open sent %d requests for the tiny index, %d for the many-file one: want equal\ntiny:\n%s\nmany:\n%s", opens[0], opens[1], logs[0], logs[1])
	}
}

// logBucket records every request a bucket receives, for messages.
type logBucket struct {
	storage.Bucket
	mu  sync.Mutex
	ops []string
}

func (b *logBucket) log(format string, args ...any) {
	b.mu.Lock()
	b.ops = append(b.ops, fmt.Sprintf(format, args...))
	b.mu.Unlock()
}

func (b *logBucket) Open(ctx context.Context, key string) (storage.Object, error) {
	b.log("open %s", key)
	o, err := b.Bucket.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	return &logObject{Object: o, b: b, key: key}, nil
}

func (b *logBucket) OpenSized(ctx context.Context, key string, size int64) (storage.Object, error) {
	o, err := storage.OpenSized(ctx, b.Bucket, key, size)
	if err != nil {
		return nil, err
	}
	return &logObject{Object: o, b: b, key: key}, nil
}

func (b *logBucket) Stat(ctx context.Context, key string) (storage.Info, error) {
	b.log("stat %s", key)
	return b.Bucket.Stat(ctx, key)
}

func (b *logBucket) List(ctx context.Context, prefix string) ([]storage.Info, error) {
	b.log("list %s", prefix)
	return b.Bucket.List(ctx, prefix)
}

type logObject struct {
	storage.Object
	b   *logBucket
	key string
}

func (o *logObject) ReadAt(p []byte, off int64) (int, error) {
	o.b.log("read %s [%d, +%d)", o.key, off, len(p))
	return o.Object.ReadAt(p, off)
}

// TestMissingPostingsFileAtSearch: Open no longer looks at each postings
// file, so a file deleted behind the index's back is reported by the
// search that reads it, as index corruption naming the file.
func TestMissingPostingsFileAtSearch(t *testing.T) {
	ctx := context.Background()
	benv, qenv := localEnv(t)
	src := filepath.Join(t.TempDir(), "src.parquet")
	rows := synthRows(5, 0, 2000, 16)
	writeSynth(t, src, rows)
	res, err := indexer.Create(ctx, benv, indexer.Options{Name: "gone", Source: src, VectorField: "vec",
		KeyFields: []string{"id"}, NList: 16, Roots: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	loc := res.Metadata.CurrentSnapshot().IndexTables[metadata.RolePostings].Properties["location"]
	objs, err := benv.Warehouse.List(ctx, loc+"bucket-")
	if err != nil || len(objs) == 0 {
		t.Fatalf("list postings: %d files, %v", len(objs), err)
	}
	for _, o := range objs {
		if err := benv.Warehouse.Delete(ctx, o.Key); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := query.Open(ctx, qenv, "gone", query.OpenOptions{})
	if err != nil {
		t.Fatalf("open: %v (the files are only read by searches)", err)
	}
	defer ix.Close()
	_, err = ix.Search(ctx, rows[0].Vec, query.Options{K: 5, NProbe: 16, KeysOnly: true})
	if !errors.Is(err, query.ErrCorrupt) || !strings.Contains(err.Error(), objs[0].Key[:len(loc)]) {
		t.Fatalf("search error %v, want ErrCorrupt naming a postings file", err)
	}
}

// TestS3ColdFirstQueryRounds: the first query of a freshly opened index
// over the S3 server, joining source rows, takes at most three rounds of
// storage reads: its postings (one round), the key-rows table (one GET,
// instead of a scan of the source) and the joined source rows (one round).
func TestS3ColdFirstQueryRounds(t *testing.T) {
	ctx := context.Background()
	srv := testenv.S3(t)
	wh, cat := s3Warehouse(t, srv)
	src := filepath.Join(t.TempDir(), "src.parquet")
	rows := synthRows(3, 0, 5000, 16)
	writeSynth(t, src, rows)
	if _, err := indexer.Create(ctx, indexer.Env{Warehouse: wh, Catalog: cat}, indexer.Options{Name: "cold", Source: src,
		VectorField: "vec", KeyFields: []string{"id"}, NList: 64, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	lb := &logBucket{Bucket: wh}
	ix, err := query.Open(ctx, query.Env{Warehouse: lb, Catalog: cat}, "cold", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	lb.mu.Lock()
	lb.ops = nil
	lb.mu.Unlock()
	wh0, src0 := ix.StorageStats()
	r, err := ix.Search(ctx, rows[42].Vec, query.Options{K: 10, NProbe: 8, Columns: []string{"id", "label"}})
	if err != nil {
		t.Fatal(err)
	}
	wh1, src1 := ix.StorageStats()
	if len(r.Hits) == 0 || r.Hits[0].Row["id"] != rows[42].ID {
		t.Fatalf("first hit %+v, want id %d", r.Hits, rows[42].ID)
	}
	// Warehouse requests beyond the postings round: the key-rows GET only.
	extra := wh1.Requests - wh0.Requests - r.Stats.Requests
	var keyRows int
	for _, op := range lb.ops {
		if strings.Contains(op, "read ") && strings.HasSuffix(strings.Fields(op)[1], "key-rows.parquet") {
			keyRows++
		}
	}
	rounds := r.Stats.Rounds + extra
	t.Logf("cold first query: %d postings requests in %d+%d rounds (postings/join + key map), %d source requests",
		r.Stats.Requests, r.Stats.Rounds, extra, src1.Requests-src0.Requests)
	if keyRows != 1 || extra != 1 {
		t.Fatalf("%d reads of the key-rows table, %d warehouse requests beyond the postings: want 1 and 1\n%s", keyRows, extra, strings.Join(lb.ops, "\n"))
	}
	if rounds > 3 {
		t.Fatalf("cold first query took %d rounds, want ≤ 3 (%+v)", rounds, r.Stats)
	}
}
