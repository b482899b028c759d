package server_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/artifact"
	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/errclass"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/ivf"
	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/serving"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/vecfile"
)

type dataRow struct {
	ID        int64     `parquet:"id"`
	Embedding []float32 `parquet:"embedding,list"`
}

// writeUncompressed writes rows without compression, so that changing a
// key's value keeps the file's size.
func writeUncompressed(t *testing.T, path string, rows []dataRow) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[dataRow](f, parquet.Compression(&parquet.Uncompressed))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDataErrorsAreNot500 indexes a source, then rewrites it in place
// keeping each file's size and modification time (the source identity),
// as a tool that rewrites files in place can, so that the index still
// opens but the rows no longer match it; a search over HTTP must answer
// the stable 409 code of the problem, never 500 internal.
func TestDataErrorsAreNot500(t *testing.T) {
	for _, tc := range []struct {
		name    string
		patch   func(rows []dataRow) // the in-place change
		status  int
		code    string
		message []string
	}{
		{"duplicate key", func(rows []dataRow) { rows[250].ID = 120 }, http.StatusConflict, serving.CodeSourceInvalid,
			[]string{"duplicate source key", "row 250 (key id=120)", `row 120 of file "src.parquet"`, "parqdb index refresh dup"}},
		{"missing source row", func(rows []dataRow) { rows[250].ID = 100000 }, http.StatusConflict, serving.CodeIndexCorrupt,
			[]string{"key id=250", "no row of source", "parqdb index verify dup"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			env := newLocalEnv(t)
			rows := randomRows(300, 9)
			src := filepath.Join(t.TempDir(), "src.parquet")
			writeUncompressed(t, src, rows)
			_, err := indexer.Create(ctx, indexer.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, indexer.Options{
				Name: "dup", Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 4,
			})
			if err != nil {
				t.Fatal(err)
			}
			before, err := os.Stat(src)
			if err != nil {
				t.Fatal(err)
			}
			tc.patch(rows)
			writeUncompressed(t, src, rows)
			if err := os.Chtimes(src, before.ModTime(), before.ModTime()); err != nil {
				t.Fatal(err)
			}
			if after, err := os.Stat(src); err != nil || after.Size() != before.Size() {
				t.Fatalf("rewritten source: %v, size %d, want %d (the test needs the identity kept)", err, after.Size(), before.Size())
			}
			_, url := startServer(t, env, server.Config{})
			f := &fixture{env: env, url: url}
			status, m := f.post(t, "/v1/indexes/dup/search", map[string]any{"vector": vec64(rows[250].Embedding), "k": 5, "nprobe": 4})
			if status != tc.status || errCode(m) != tc.code {
				t.Fatalf("status %d code %q (%v), want %d %s", status, errCode(m), m, tc.status, tc.code)
			}
			msg, _ := m["error"].(map[string]any)["message"].(string)
			for _, w := range tc.message {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
}

// TestAsErrorDataProblems checks the classification of every data-caused
// error class: none is internal.
func TestAsErrorDataProblems(t *testing.T) {
	storageErr := func(err error) error { return &storage.Error{Op: "read", Key: "k", Bucket: "b", Err: err} }
	srcErr := func(rule, cause error) error {
		return &source.Error{Source: "s", File: "f.parquet", Row: -1, Rule: rule, Err: cause}
	}
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{srcErr(source.ErrDuplicateKey, nil), http.StatusConflict, serving.CodeSourceInvalid},
		{srcErr(source.ErrNullKey, nil), http.StatusConflict, serving.CodeSourceInvalid},
		{srcErr(source.ErrNaN, nil), http.StatusConflict, serving.CodeSourceInvalid},
		{srcErr(source.ErrCorrupt, errors.New("bad page header")), http.StatusConflict, serving.CodeSourceInvalid},
		{srcErr(source.ErrCorrupt, storageErr(storage.ErrNotExist)), http.StatusConflict, serving.CodeStaleIndex},
		{srcErr(source.ErrCorrupt, storageErr(storage.ErrChanged)), http.StatusConflict, serving.CodeStaleIndex},
		{srcErr(source.ErrCorrupt, storageErr(errors.New("connection refused"))), http.StatusServiceUnavailable, serving.CodeStorageUnavailable},
		{fmt.Errorf("read postings: %w", storageErr(storage.ErrChanged)), http.StatusConflict, serving.CodeIndexCorrupt},
		{fmt.Errorf("read postings: %w", storageErr(errors.New("connection reset"))), http.StatusServiceUnavailable, serving.CodeStorageUnavailable},
		{fmt.Errorf("open postings file: %w", storageErr(storage.ErrNotExist)), http.StatusConflict, serving.CodeIndexCorrupt},
		{fmt.Errorf("x: %w", query.ErrCorrupt), http.StatusConflict, serving.CodeIndexCorrupt},
		{fmt.Errorf("x: %w", postings.ErrCorrupt), http.StatusConflict, serving.CodeIndexCorrupt},
		{fmt.Errorf("x: %w", postings.ErrManifest), http.StatusConflict, serving.CodeIndexCorrupt},
		{fmt.Errorf("x: %w", artifact.ErrMismatch), http.StatusConflict, serving.CodeIndexCorrupt},
		{fmt.Errorf("x: %w", metadata.ErrInvalid), http.StatusConflict, serving.CodeIndexCorrupt},
		{fmt.Errorf("x: %w", catalog.ErrCorrupt), http.StatusConflict, serving.CodeIndexCorrupt},
		{fmt.Errorf("x: %w", ivf.ErrInvalidCentroids), http.StatusConflict, serving.CodeIndexCorrupt},
		{fmt.Errorf("x: %w", vecfile.ErrCorrupt), http.StatusConflict, serving.CodeIndexCorrupt},
		{errclass.MarkCorrupt(fmt.Errorf("x: %w", location.ErrInvalid)), http.StatusConflict, serving.CodeIndexCorrupt},
		{fmt.Errorf("x: %w", location.ErrInvalid), http.StatusInternalServerError, serving.CodeInternal}, // unmarked: not known to be stored data
		{errors.New("a bug"), http.StatusInternalServerError, serving.CodeInternal},
	} {
		e := serving.AsError(tc.err)
		if e.Status != tc.status || e.Code != tc.code {
			t.Errorf("AsError(%v) = %d %s, want %d %s", tc.err, e.Status, e.Code, tc.status, tc.code)
		}
	}
	for _, c := range []string{serving.CodeSourceInvalid, serving.CodeIndexCorrupt, serving.CodeStorageUnavailable} {
		if !strings.Contains(string(server.OpenAPI), "- "+c+" ") {
			t.Errorf("error code %s is not in the OpenAPI document", c)
		}
	}
}

// TestDamagedIndexIsNot500 damages one warehouse file of an index in turn
// (deleted, truncated, or with bytes flipped in its middle) and searches
// it over HTTP: every answer is a stable data code, never 500 internal.
func TestDamagedIndexIsNot500(t *testing.T) {
	ctx := context.Background()
	rows := randomRows(300, 4)
	src := filepath.Join(t.TempDir(), "src.parquet")
	writeUncompressed(t, src, rows)
	// build indexes the source in a fresh warehouse and returns its files
	// by role: the key with the UUIDs and random suffixes replaced by "*".
	ids := regexp.MustCompile(`[0-9a-f-]{16,}`)
	build := func() (query.Env, map[string]string) {
		t.Helper()
		env := newLocalEnv(t)
		_, err := indexer.Create(ctx, indexer.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, indexer.Options{
			Name: "ix", Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 4,
		})
		if err != nil {
			t.Fatal(err)
		}
		infos, err := env.Warehouse.List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		roles := map[string]string{}
		for _, in := range infos {
			if !strings.HasPrefix(in.Key, "catalog.db") {
				roles[ids.ReplaceAllString(in.Key, "*")] = in.Key
			}
		}
		return env, roles
	}
	_, roles := build()
	if len(roles) < 7 {
		t.Fatalf("index files by role: %v", roles)
	}
	damages := []struct {
		name string
		do   func(path string) error
	}{
		{"deleted", os.Remove},
		{"truncated", func(p string) error {
			st, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.Truncate(p, st.Size()/2)
		}},
		{"flipped", func(p string) error {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for i := len(data) / 3; i < len(data)/3+16 && i < len(data); i++ {
				data[i] ^= 0xA5
			}
			return os.WriteFile(p, data, 0o644)
		}},
	}
	for role := range roles {
		for _, d := range damages {
			t.Run(d.name+" "+role, func(t *testing.T) {
				env, mine := build()
				key, ok := mine[role]
				if !ok {
					t.Fatalf("no file of role %s in %v", role, mine)
				}
				if err := d.do(filepath.Join(env.Warehouse.String(), filepath.FromSlash(key))); err != nil {
					t.Fatal(err)
				}
				_, url := startServer(t, env, server.Config{})
				f := &fixture{env: env, url: url}
				status, m := f.post(t, "/v1/indexes/ix/search", map[string]any{"vector": vec64(rows[7].Embedding), "k": 5, "nprobe": 4})
				t.Logf("%d %s", status, errCode(m))
				if status == http.StatusInternalServerError || errCode(m) == serving.CodeInternal {
					t.Errorf("status %d %v", status, m)
				}
			})
		}
	}
}

// TestSourceChangedUnderOpenIndex serves an index over a source on the real
// S3 server, then replaces or deletes the source object while the index is
// open: the next search that reads it answers 409 stale_index, not 500.
func TestSourceChangedUnderOpenIndex(t *testing.T) {
	for _, change := range []string{"replaced", "deleted"} {
		t.Run(change, func(t *testing.T) {
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
			// Larger than the tail the source reads with the footer, so
			// that the rows are read from the object afterwards.
			rows := randomRows(5000, 5)
			file := filepath.Join(t.TempDir(), "src.parquet")
			writeUncompressed(t, file, rows)
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := storage.WriteAll(ctx, src, "data/src.parquet", data); err != nil {
				t.Fatal(err)
			}
			env := newLocalEnv(t)
			_, err = indexer.Create(ctx, indexer.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, indexer.Options{
				Name: "ix", Source: "s3://" + bucket + "/data/", VectorField: "embedding", KeyFields: []string{"id"}, NList: 4,
			})
			if err != nil {
				t.Fatal(err)
			}
			_, url := startServer(t, env, server.Config{})
			f := &fixture{env: env, url: url}
			body := map[string]any{"vector": vec64(rows[7].Embedding), "k": 5, "nprobe": 4, "columns": []string{"id"}}
			if status, m := f.post(t, "/v1/indexes/ix/search", body); status != http.StatusOK {
				t.Fatalf("search before the change: %d %v", status, m)
			}
			switch change {
			case "replaced":
				rows[7].Embedding[0]++
				writeUncompressed(t, file, rows)
				data, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				if err := storage.WriteAll(ctx, src, "data/src.parquet", data); err != nil {
					t.Fatal(err)
				}
			case "deleted":
				if err := src.Delete(ctx, "data/src.parquet"); err != nil {
					t.Fatal(err)
				}
			}
			// Other columns: rows not in the row cache, read from the source.
			body["columns"] = []string{"id", "embedding"}
			status, m := f.post(t, "/v1/indexes/ix/search", body)
			if status != http.StatusConflict || errCode(m) != serving.CodeStaleIndex {
				t.Fatalf("search after the source was %s: %d %v, want 409 %s", change, status, m, serving.CodeStaleIndex)
			}
		})
	}
}

// TestTamperedMetadataIsNot500 edits the current index metadata file in
// place the way a careless operator or an attacker might — the source
// location pointed elsewhere, an unknown index provider — and checks that
// the search answers a stable 4xx code naming the problem, not 500.
func TestTamperedMetadataIsNot500(t *testing.T) {
	ctx := context.Background()
	rows := randomRows(200, 6)
	src := filepath.Join(t.TempDir(), "src.parquet")
	writeUncompressed(t, src, rows)
	for _, tc := range []struct{ name, old, new string }{
		{"source elsewhere", strconv.Quote(src), `"/etc/passwd"`},
		// The last "provider" is the index provider's (source-table's first).
		{"unknown index provider", `"provider": "parquet"`, `"provider": "lance"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newLocalEnv(t)
			if _, err := indexer.Create(ctx, indexer.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, indexer.Options{
				Name: "ix", Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 4,
			}); err != nil {
				t.Fatal(err)
			}
			entry, err := env.Catalog.Load(ctx, "ix")
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(env.Warehouse.String(), filepath.FromSlash(entry.MetadataLocation))
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), tc.old) {
				t.Fatalf("%s holds no %s", entry.MetadataLocation, tc.old)
			}
			i := strings.LastIndex(string(data), tc.old)
			edited := string(data[:i]) + tc.new + string(data[i+len(tc.old):])
			if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			_, url := startServer(t, env, server.Config{})
			f := &fixture{env: env, url: url}
			status, m := f.post(t, "/v1/indexes/ix/search", map[string]any{"vector": vec64(rows[7].Embedding), "k": 5})
			if status < 400 || status >= 500 || errCode(m) == serving.CodeInternal {
				t.Fatalf("status %d %v, want a stable 4xx code", status, m)
			}
		})
	}
}

// randomRows returns n rows with ids 0…n-1 and 8-dimensional standard
// normal vectors drawn from seed.
func randomRows(n int, seed uint64) []dataRow {
	rng := rand.New(rand.NewPCG(seed, seed))
	rows := make([]dataRow, n)
	for i := range rows {
		v := make([]float32, 8)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		rows[i] = dataRow{ID: int64(i), Embedding: v}
	}
	return rows
}
