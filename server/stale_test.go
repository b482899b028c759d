package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/serving"
)

// TestStaleFolderSourceOverHTTP: a file appended to a folder source leaves
// the served snapshot answering 200 with the ParqDB-Stale header (after
// the pool's next refresh lists the source) and stale in the description;
// a key only the appended file has is 404 key_not_indexed naming it; a
// recorded file rewritten in place is 409 stale_index naming it, never
// source_invalid, for the open snapshot and for a fresh open alike.
func TestStaleFolderSourceOverHTTP(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Larger than the footer read (64 KiB): rows are read from the file
	// after Open.
	rows := randomRows(5000, 5)
	writeUncompressed(t, filepath.Join(dir, "part-0.parquet"), rows)
	env := newLocalEnv(t)
	if _, err := indexer.Create(ctx, indexer.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, indexer.Options{
		Name: "ix", Source: dir, VectorField: "embedding", KeyFields: []string{"id"}, NList: 4,
	}); err != nil {
		t.Fatal(err)
	}
	srv, url := startServer(t, env, server.Config{Pool: serving.PoolOptions{RefreshInterval: -1}})
	post := func(url string, body any) (int, http.Header, map[string]any) {
		t.Helper()
		data, _ := json.Marshal(body)
		resp, err := http.Post(url+"/v1/indexes/ix/search", "application/json", bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		return resp.StatusCode, resp.Header, m
	}
	search := map[string]any{"vector": vec64(rows[7].Embedding), "k": 5, "nprobe": 4, "columns": []string{"id"}}
	status, hdr, m := post(url, search)
	if status != http.StatusOK || hdr.Get(server.StaleHeader) != "" {
		t.Fatalf("search of a fresh index: %d %q %v", status, hdr.Get(server.StaleHeader), m)
	}

	more := randomRows(10, 6)
	for i := range more {
		more[i].ID = 100000 + int64(i)
	}
	writeUncompressed(t, filepath.Join(dir, "part-1.parquet"), more)
	if err := srv.Pool().Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	status, hdr, m = post(url, search)
	if h := hdr.Get(server.StaleHeader); status != http.StatusOK || !strings.Contains(h, "1 file(s) added") || !strings.Contains(h, "parqdb index refresh ix") {
		t.Fatalf("search after an append: %d, %s %q, %v", status, server.StaleHeader, h, m)
	}
	// A server that opens the snapshot after the append: stale from the
	// start; keys are looked up there (the lookups fill caches that would
	// hide the rewrite below from the first server).
	_, url2 := startServer(t, env, server.Config{Pool: serving.PoolOptions{RefreshInterval: -1}})
	f := &fixture{env: env, url: url2}
	status, d := f.get(t, "/v1/indexes/ix")
	if status != http.StatusOK || d["stale"] != true || !strings.Contains(toJSON(d["added_files"]), "part-1.parquet") {
		t.Fatalf("describe after an append: %d %v", status, d)
	}
	status, _, m = post(url2, map[string]any{"key": 100003, "k": 3})
	if msg := toJSON(m); status != http.StatusNotFound || errCode(m) != serving.CodeKeyNotIndexed || !strings.Contains(msg, "part-1.parquet") {
		t.Fatalf("key only in the appended file: %d %v, want 404 %s naming part-1.parquet", status, m, serving.CodeKeyNotIndexed)
	}
	if status, _, m = post(url2, map[string]any{"key": 7, "k": 3}); status != http.StatusOK {
		t.Fatalf("indexed key on a stale index: %d %v", status, m)
	}

	// Rewrite part-0 in place (same inode): the open snapshot's pages no
	// longer decode.
	bigger := randomRows(9000, 7)
	tmp := filepath.Join(t.TempDir(), "x.parquet")
	writeUncompressed(t, tmp, bigger)
	data, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	fh, err := os.OpenFile(filepath.Join(dir, "part-0.parquet"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.Write(data); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	later := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(dir, "part-0.parquet"), later, later)
	search["columns"] = []string{"id", "embedding"} // rows not in the row cache
	for _, fresh := range []bool{false, true} {
		if fresh {
			_, url = startServer(t, env, server.Config{})
		}
		status, _, m = post(url, search)
		if msg := toJSON(m); status != http.StatusConflict || errCode(m) != serving.CodeStaleIndex || !strings.Contains(msg, "part-0.parquet") {
			t.Fatalf("search after a rewrite (fresh server %v): %d %v, want 409 %s naming part-0.parquet", fresh, status, m, serving.CodeStaleIndex)
		}
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
