package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/server"
)

// TestSearchStatsVectorsFile: with the vector store off, a refined
// search's stats count the exact vectors' reads apart from the postings':
// the vectors file's requests and bytes on an index that has one, the rows
// read from source pages on one that does not; /metrics sums them.
func TestSearchStatsVectorsFile(t *testing.T) {
	env := newLocalEnv(t)
	abs, err := filepath.Abs(glove)
	if err != nil {
		t.Fatal(err)
	}
	for _, vf := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "withfile"}[vf]
		_, err := indexer.Create(context.Background(), indexer.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, indexer.Options{
			Name: name, Source: abs, VectorField: "embedding", KeyFields: []string{"word"},
			Metric: metadata.MetricCosine, Encoding: "lvq8", NList: 64, VectorsFile: vf,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{env: env}
	f.srv, f.url = startServer(t, env, server.Config{Pool: server.PoolOptions{VectorCacheBytes: -1}})
	stat := func(m map[string]any, k string) int64 {
		t.Helper()
		st, _ := m["stats"].(map[string]any)
		v, ok := st[k]
		if !ok {
			return 0
		}
		num, _ := v.(json.Number)
		n, err := num.Int64()
		if err != nil {
			t.Fatalf("stats.%s: %v", k, v)
		}
		return n
	}
	body := map[string]any{"key": "king", "k": 5, "nprobe": 8, "refine": 3}
	code, m := f.post(t, "/v1/indexes/withfile/search", body)
	if code != 200 {
		t.Fatalf("withfile: %d %v", code, m)
	}
	refined := stat(m, "refined")
	if refined == 0 || stat(m, "vectors_file_requests") == 0 || stat(m, "vectors_file_bytes") < refined*50*4 || stat(m, "source_vector_rows") != 0 {
		t.Fatalf("withfile stats: %v", m["stats"])
	}
	fileBytes := stat(m, "vectors_file_bytes")
	code, m = f.post(t, "/v1/indexes/plain/search", body)
	if code != 200 {
		t.Fatalf("plain: %d %v", code, m)
	}
	srcRows := stat(m, "source_vector_rows")
	if srcRows < stat(m, "refined") || srcRows == 0 || stat(m, "vectors_file_requests") != 0 {
		t.Fatalf("plain stats: %v", m["stats"])
	}
	resp, err := http.Get(f.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	metric := func(name string) int64 {
		t.Helper()
		mm := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(text)
		if mm == nil {
			t.Fatalf("/metrics lacks %s", name)
		}
		v, err := strconv.ParseFloat(string(mm[1]), 64)
		if err != nil {
			t.Fatal(err)
		}
		return int64(v)
	}
	if got := metric("parqdb_search_vectors_file_bytes_total"); got != fileBytes {
		t.Errorf("parqdb_search_vectors_file_bytes_total %d, want %d", got, fileBytes)
	}
	if got := metric("parqdb_search_source_vector_rows_total"); got != srcRows {
		t.Errorf("parqdb_search_source_vector_rows_total %d, want %d", got, srcRows)
	}
	if metric("parqdb_search_vectors_file_requests_total") == 0 {
		t.Error("parqdb_search_vectors_file_requests_total is 0")
	}
}
