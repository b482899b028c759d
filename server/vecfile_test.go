package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/serving"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/vecfile"
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
	f.srv, f.url = startServer(t, env, server.Config{Pool: serving.PoolOptions{VectorCacheBytes: -1}})
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

// TestDescribeVectorsFile: GET /v1/indexes/{name} names the served
// snapshot's vectors file and its size; an index without one has no
// vectors_file member; a damaged file is described with an error naming
// it rather than failing the description.
func TestDescribeVectorsFile(t *testing.T) {
	env := newLocalEnv(t)
	abs, err := filepath.Abs(glove)
	if err != nil {
		t.Fatal(err)
	}
	locs := map[string]string{}
	for _, name := range []string{"plain", "withfile", "damaged"} {
		res, err := indexer.Create(context.Background(), indexer.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, indexer.Options{
			Name: name, Source: abs, VectorField: "embedding", KeyFields: []string{"word"},
			Metric: metadata.MetricCosine, NList: 64, VectorsFile: name != "plain",
		})
		if err != nil {
			t.Fatal(err)
		}
		locs[name] = vecfile.Location(postings.SnapshotLayout(res.Metadata.CurrentSnapshot()).Meta)
	}
	// Damage the footer's magic: the file no longer opens.
	o, err := env.Warehouse.Open(context.Background(), locs["damaged"])
	if err != nil {
		t.Fatal(err)
	}
	size := o.Size()
	data := make([]byte, size)
	if _, err := o.ReadAt(data, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	o.Close()
	data[size-64] ^= 0xff
	if err := env.Warehouse.Delete(context.Background(), locs["damaged"]); err != nil {
		t.Fatal(err)
	}
	if err := storage.WriteAll(context.Background(), env.Warehouse, locs["damaged"], data); err != nil {
		t.Fatal(err)
	}
	f := &fixture{env: env}
	f.srv, f.url = startServer(t, env, server.Config{})
	for name, want := range map[string]string{"plain": "", "withfile": "size", "damaged": "error"} {
		code, m := f.get(t, "/v1/indexes/"+name)
		if code != 200 {
			t.Fatalf("%s: %d %v", name, code, m)
		}
		vf, has := m["vectors_file"].(map[string]any)
		switch want {
		case "":
			if has {
				t.Fatalf("%s: vectors_file %v, want none", name, vf)
			}
		case "size":
			if !has || vf["location"] != locs[name] || vf["size_bytes"] != json.Number(strconv.Itoa(10000*50*4+64)) || vf["error"] != nil {
				t.Fatalf("%s: vectors_file %v, want %s of %d bytes", name, vf, locs[name], 10000*50*4+64)
			}
		case "error":
			e, _ := vf["error"].(string)
			if !has || vf["location"] != locs[name] || !strings.Contains(e, locs[name]) || vf["size_bytes"] != nil {
				t.Fatalf("%s: vectors_file %v, want an error naming %s", name, vf, locs[name])
			}
		}
	}
}
