package query_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

// staleFolder builds index "vecs" over a folder of a.parquet (ids 0–399)
// and b.parquet (ids 400–799) and returns the folder.
func staleFolder(t *testing.T) (string, query.Env) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeSynth(t, filepath.Join(dir, "a.parquet"), synthRows(1, 0, 400, 8))
	writeSynth(t, filepath.Join(dir, "b.parquet"), synthRows(2, 400, 400, 8))
	benv, env := localEnv(t)
	buildIndex(t, benv, dir, metadata.EncodingLVQ8, 8)
	return dir, env
}

// rewriteInPlace overwrites path with data through the same inode (as an
// editor or `cp` over it does), so that a reader holding it open reads the
// new bytes, and moves its mtime so its version changes.
func rewriteInPlace(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
}

// TestStaleFolderKeepsAnswering: a file added to a folder source leaves
// the snapshot's recorded files as they were, so Open reads exactly them,
// searches answer as before, Stale names the added file, and a key only
// the added file has is ErrKeyNotIndexed naming it (not ErrKeyNotFound).
func TestStaleFolderKeepsAnswering(t *testing.T) {
	ctx := context.Background()
	dir, env := staleFolder(t)
	q := synthRows(1, 0, 400, 8)[7].Vec
	opts := query.Options{K: 5, NProbe: 8, Columns: []string{"label"}}
	ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before, err := ix.Search(ctx, q, opts)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Stale() != nil {
		t.Fatalf("fresh index is stale: %v", ix.Stale())
	}
	ix.Close()

	writeSynth(t, filepath.Join(dir, "c.parquet"), synthRows(3, 800, 10, 8))
	ix, err = query.Open(ctx, env, "vecs", query.OpenOptions{})
	if err != nil {
		t.Fatalf("Open after a file was added: %v", err)
	}
	defer ix.Close()
	s := ix.Stale()
	if s == nil || len(s.Added) != 1 || s.Added[0] != "c.parquet" {
		t.Fatalf("Stale() = %+v, want c.parquet added", s)
	}
	if msg := s.String(); !strings.Contains(msg, `"c.parquet"`) || !strings.Contains(msg, "parqdb index refresh vecs") {
		t.Fatalf("staleness warning does not name the file and the fix: %s", msg)
	}
	after, err := ix.Search(ctx, q, opts)
	if err != nil {
		t.Fatalf("Search on a stale index: %v", err)
	}
	if got, want := keysOf(after.Hits), keysOf(before.Hits); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("answer changed after an append: %v, was %v", got, want)
	}
	// A key of the snapshot still works; one only c.parquet has does not.
	for _, c := range []struct {
		key  string
		want error
	}{{"7", nil}, {"805", query.ErrKeyNotIndexed}, {"99999", query.ErrKeyNotFound}} {
		vals, err := ix.ParseKey([]string{c.key})
		if err != nil {
			t.Fatal(err)
		}
		_, err = ix.SearchNearKey(ctx, vals, opts)
		if !errors.Is(err, c.want) || (c.want != nil && err == nil) {
			t.Fatalf("SearchNearKey(%s) = %v, want %v", c.key, err, c.want)
		}
		if c.want == query.ErrKeyNotIndexed && (!strings.Contains(err.Error(), `"c.parquet"`) || errors.Is(err, query.ErrKeyNotFound)) {
			t.Fatalf("SearchNearKey(%s): %v, want the added file named", c.key, err)
		}
	}
	if rows, err := ix.ExactBatch(ctx, [][]float32{q}, 3, 1); err != nil || len(rows[0]) != 3 {
		t.Fatalf("ExactBatch on a stale index: %v, %v", rows, err)
	}
}

// TestStaleRecordedFileMoved: a recorded file removed or rewritten (in
// place, before or after Open) is a *StaleError naming the file and the
// fix, never a decoding or contract error; so is a single-file source
// rewritten in place.
func TestStaleRecordedFileMoved(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, err error, file string) {
		t.Helper()
		var se *query.StaleError
		if !errors.As(err, &se) || !errors.Is(err, query.ErrStale) {
			t.Fatalf("got %v, want a StaleError", err)
		}
		if errors.Is(err, query.ErrSourceInvalid) && !errors.Is(err, query.ErrStale) {
			t.Fatalf("a moved file reported as an invalid source: %v", err)
		}
		msg := err.Error()
		if !strings.Contains(msg, `"`+file+`"`) || !strings.Contains(msg, "parqdb index refresh vecs") {
			t.Fatalf("error does not name %s and the fix: %s", file, msg)
		}
	}
	t.Run("removed", func(t *testing.T) {
		dir, env := staleFolder(t)
		os.Remove(filepath.Join(dir, "b.parquet"))
		_, err := query.Open(ctx, env, "vecs", query.OpenOptions{})
		check(t, err, "b.parquet")
	})
	t.Run("rewritten", func(t *testing.T) {
		dir, env := staleFolder(t)
		rewriteInPlace(t, filepath.Join(dir, "b.parquet"), writeSynth(t, "", synthRows(4, 400, 401, 8)))
		_, err := query.Open(ctx, env, "vecs", query.OpenOptions{})
		check(t, err, "b.parquet")
	})
	t.Run("rewritten-after-open", func(t *testing.T) {
		// Files larger than the footer read (64 KiB), so that the join
		// reads pages from the file, not from the tail read at Open.
		dir := filepath.Join(t.TempDir(), "src")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeSynth(t, filepath.Join(dir, "a.parquet"), synthRows(1, 0, 1000, 64))
		writeSynth(t, filepath.Join(dir, "b.parquet"), synthRows(2, 1000, 1000, 64))
		benv, env := localEnv(t)
		buildIndex(t, benv, dir, metadata.EncodingLVQ8, 8)
		q := synthRows(1, 0, 1000, 64)[7].Vec
		ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		// Other rows, other sizes: the old footer's offsets now point into
		// the middle of pages.
		rewriteInPlace(t, filepath.Join(dir, "b.parquet"), writeSynth(t, "", synthRows(5, 0, 3000, 64)))
		_, err = ix.ExactBatch(ctx, [][]float32{q}, 3, 1) // reads every vector
		check(t, err, "b.parquet")
		if _, err := ix.RecheckSource(ctx); !errors.Is(err, query.ErrStale) {
			t.Fatalf("RecheckSource after a rewrite: %v, want ErrStale", err)
		}
	})
	t.Run("single-file", func(t *testing.T) {
		src := filepath.Join(t.TempDir(), "one.parquet")
		writeSynth(t, src, synthRows(1, 0, 400, 8))
		benv, env := localEnv(t)
		buildIndex(t, benv, src, metadata.EncodingLVQ8, 8)
		rewriteInPlace(t, src, writeSynth(t, "", synthRows(1, 0, 401, 8)))
		_, err := query.Open(ctx, env, "vecs", query.OpenOptions{})
		check(t, err, "one.parquet")
	})
	t.Run("no-recorded-list", func(t *testing.T) {
		// A snapshot without source-files.json (an older writer's) is
		// compared by table-identity: any change stops it, as before.
		dir, env := staleFolder(t)
		ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		key := postings.SnapshotLayout(ix.Snapshot()).SourceFiles()
		ix.Close()
		if err := env.Warehouse.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		if ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{}); err != nil {
			t.Fatalf("Open without a recorded list: %v", err)
		} else {
			ix.Close()
		}
		writeSynth(t, filepath.Join(dir, "c.parquet"), synthRows(3, 800, 10, 8))
		_, err = query.Open(ctx, env, "vecs", query.OpenOptions{})
		var se *query.StaleError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "2 files") {
			t.Fatalf("Open after an append without a recorded list: %v, want the legacy StaleError", err)
		}
	})
}

// TestStaleS3Source: on S3 the recorded version is the ETag: an added
// object makes the index stale and keeps it answering, an object
// rewritten under its key (a new ETag) is a StaleError naming it, also for
// an index opened before the rewrite (its reads are conditional on the
// ETag). Objects are larger than the footer read (64 KiB), so that
// searches read them again after Open.
func TestStaleS3Source(t *testing.T) {
	ctx := context.Background()
	srv := testenv.S3(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_REGION", srv.Region)
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
	bucket := srv.NewBucket(t)
	src, err := storage.Open(ctx, "s3://"+bucket)
	if err != nil {
		t.Fatal(err)
	}
	put := func(key string, rows []synthRow) {
		if err := storage.WriteAll(ctx, src, key, writeSynth(t, "", rows)); err != nil {
			t.Fatal(err)
		}
	}
	put("data/a.parquet", synthRows(1, 0, 400, 64))
	put("data/b.parquet", synthRows(2, 400, 400, 64))
	benv, env := localEnv(t)
	buildIndex(t, benv, "s3://"+bucket+"/data/", metadata.EncodingLVQ8, 8)
	q := synthRows(1, 0, 400, 64)[7].Vec
	opts := query.Options{K: 5, NProbe: 8, Columns: []string{"label"}}

	put("data/c.parquet", synthRows(3, 800, 10, 64))
	ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{})
	if err != nil {
		t.Fatalf("Open after an object was added: %v", err)
	}
	defer ix.Close()
	if s := ix.Stale(); s == nil || len(s.Added) != 1 || s.Added[0] != "data/c.parquet" {
		t.Fatalf("Stale() = %+v, want data/c.parquet added", s)
	}
	if _, err := ix.Search(ctx, q, opts); err != nil {
		t.Fatalf("Search on a stale S3 index: %v", err)
	}
	vals, _ := ix.ParseKey([]string{"805"})
	if _, err := ix.SearchNearKey(ctx, vals, opts); !errors.Is(err, query.ErrKeyNotIndexed) || !strings.Contains(err.Error(), "data/c.parquet") {
		t.Fatalf("key only in the added object: %v, want ErrKeyNotIndexed naming it", err)
	}

	// Same rows, other vectors: the same size, another ETag.
	put("data/b.parquet", synthRows(9, 400, 400, 64))
	wantStale := func(err error) {
		t.Helper()
		if !errors.Is(err, query.ErrStale) || !strings.Contains(err.Error(), "data/b.parquet") {
			t.Fatalf("got %v, want ErrStale naming data/b.parquet", err)
		}
	}
	_, err = query.Open(ctx, env, "vecs", query.OpenOptions{})
	wantStale(err)
	_, err = ix.RecheckSource(ctx)
	wantStale(err)
	_, err = ix.ExactBatch(ctx, [][]float32{q}, 3, 1) // reads every vector, b's too
	if !errors.Is(err, query.ErrStale) {
		t.Fatalf("ExactBatch after the rewrite: %v, want ErrStale", err)
	}
}
