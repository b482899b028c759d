package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/serving"
)

// fixture is a running server over a local warehouse holding "words"
// (lvq8) and "words4" (lvq4).
type fixture struct {
	env   query.Env
	srv   *server.Server
	url   string
	token string
	king  []float32 // the canonical vector of "king"
	dim   int
}

func startServer(t testing.TB, env query.Env, cfg server.Config) (*server.Server, string) {
	t.Helper()
	cfg.Env = env
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		srv.Close()
	})
	return srv, "http://" + ln.Addr().String()
}

func newFixture(t *testing.T, cfg server.Config) *fixture {
	t.Helper()
	env := newLocalEnv(t)
	buildGlove(t, env, "words", "lvq8")
	f := &fixture{env: env}
	f.srv, f.url = startServer(t, env, cfg)
	ix, err := query.Open(context.Background(), env, "words", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	vals, err := ix.ParseKey([]string{"king"})
	if err != nil {
		t.Fatal(err)
	}
	if f.king, err = ix.VectorOf(context.Background(), vals); err != nil {
		t.Fatal(err)
	}
	f.dim = ix.Dim()
	return f
}

// post sends body (a value to marshal, or raw []byte) and decodes the
// answer into a generic map with json.Number values.
func (f *fixture) post(t *testing.T, path string, body any, hdr ...string) (int, map[string]any) {
	t.Helper()
	var data []byte
	switch b := body.(type) {
	case []byte:
		data = b
	case string:
		data = []byte(b)
	default:
		var err error
		if data, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(http.MethodPost, f.url+path, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if f.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	return do(t, req)
}

func (f *fixture) get(t *testing.T, path string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q, body %s", req.Method, req.URL.Path, ct, data)
	}
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("%s %s: %v: %s", req.Method, req.URL.Path, err, data)
	}
	return resp.StatusCode, out
}

func vec64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// rowsOf returns results[q] as rows.
func rowsOf(t *testing.T, m map[string]any, q int) []map[string]any {
	t.Helper()
	res, ok := m["results"].([]any)
	if !ok || len(res) <= q {
		t.Fatalf("no results[%d] in %v", q, m)
	}
	var out []map[string]any
	for _, r := range res[q].([]any) {
		out = append(out, r.(map[string]any))
	}
	return out
}

// sameAsQuery checks HTTP rows against a direct query.Search.
func sameAsQuery(t *testing.T, rows []map[string]any, want *query.Result) {
	t.Helper()
	if len(rows) != len(want.Hits) {
		t.Fatalf("%d rows, query gives %d", len(rows), len(want.Hits))
	}
	for i, h := range want.Hits {
		r := rows[i]
		if len(r) != len(want.Columns) {
			t.Fatalf("row %d has %d members, want %v", i, len(r), want.Columns)
		}
		for _, c := range want.Columns {
			got := r[c]
			if c == "_distance" {
				d, err := strconv.ParseFloat(string(got.(json.Number)), 32)
				if err != nil || float32(d) != h.Distance {
					t.Fatalf("row %d: _distance %v, query %v", i, got, h.Distance)
				}
				continue
			}
			if fmt.Sprint(got) != fmt.Sprint(h.Row[c]) {
				t.Fatalf("row %d column %s: %v, query %v", i, c, got, h.Row[c])
			}
		}
	}
}

func TestSearchEqualsQuery(t *testing.T) {
	f := newFixture(t, server.Config{})
	ctx := context.Background()
	ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	q2 := make([]float32, f.dim)
	for i := range q2 {
		q2[i] = float32(i%7) - 3
	}
	// the largest batch (serving.DefaultLimits.MaxBatch): a piece a slot
	many := make([][]float32, serving.DefaultLimits.MaxBatch)
	manyBody := make([][]float64, len(many))
	for i := range many {
		many[i] = make([]float32, f.dim)
		for j := range many[i] {
			many[i][j] = f.king[j] + float32((i*7+j*3)%11-5)/16
		}
		manyBody[i] = vec64(many[i])
	}
	for _, tc := range []struct {
		name string
		body map[string]any
		opts query.Options
		qs   [][]float32
	}{
		{"vector", map[string]any{"vector": vec64(f.king)}, query.Options{K: 10, NProbe: 8}, [][]float32{f.king}},
		{"options", map[string]any{"vector": vec64(q2), "k": 7, "nprobe": 20, "refine": 3, "columns": []string{"rank", "word"}},
			query.Options{K: 7, NProbe: 20, Refine: 3, Columns: []string{"rank", "word"}}, [][]float32{q2}},
		{"batch", map[string]any{"vectors": [][]float64{vec64(f.king), vec64(q2)}, "k": 3, "columns": []string{"word"}},
			query.Options{K: 3, NProbe: 8, Columns: []string{"word"}}, [][]float32{f.king, q2}},
		{"batch of pieces", map[string]any{"vectors": manyBody, "k": 3, "nprobe": 5, "columns": []string{"word"}},
			query.Options{K: 3, NProbe: 5, Columns: []string{"word"}}, many},
		{"key", map[string]any{"key": "king", "k": 5, "columns": []string{"word"}}, query.Options{K: 5, NProbe: 8, Columns: []string{"word"}}, [][]float32{f.king}},
		{"key array", map[string]any{"key": []string{"king"}, "k": 5, "keys_only": true}, query.Options{K: 5, NProbe: 8, KeysOnly: true}, [][]float32{f.king}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, m := f.post(t, "/v1/indexes/words/search", tc.body)
			if status != http.StatusOK {
				t.Fatalf("status %d: %v", status, m)
			}
			if m["snapshot_id"].(json.Number) != "1" || m["index"] != "words" {
				t.Fatalf("index %v snapshot %v", m["index"], m["snapshot_id"])
			}
			for qi, q := range tc.qs {
				want, err := ix.Search(ctx, q, tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				cols := m["columns"].([]any)
				if fmt.Sprint(cols) != fmt.Sprint(want.Columns) {
					t.Fatalf("columns %v, want %v", cols, want.Columns)
				}
				sameAsQuery(t, rowsOf(t, m, qi), want)
			}
			if tc.name == "key" && rowsOf(t, m, 0)[0]["word"] != "king" {
				t.Fatalf("near-key search does not start with the key's row")
			}
		})
	}
}

// TestBatchErrorNamesQuery: an error of one query of a batch names its
// position in the whole batch, past the pieces the batch is searched in.
func TestBatchErrorNamesQuery(t *testing.T) {
	env := newLocalEnv(t)
	buildGlove(t, env, "words", "lvq8")
	ctx := context.Background()
	ix, err := query.Open(ctx, env, "words", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	qs := make([][]float32, 700)
	for i := range qs {
		qs[i] = make([]float32, ix.Dim())
		qs[i][i%ix.Dim()] = 1
	}
	qs[517][3] = float32(math.NaN())
	a := serving.NewAdmitter(serving.LoadLimits{})
	_, err = a.SearchBatch(ctx, ix, qs, query.Options{K: 3, NProbe: 4})
	var be *query.BatchError
	if !errors.As(err, &be) || be.Query != 517 || !strings.HasPrefix(err.Error(), "query 517: ") || !errors.Is(err, query.ErrBadQuery) {
		t.Fatalf("error %v (%T), want query 517's bad query", err, err)
	}
	rs, err := a.SearchBatch(ctx, ix, qs[:517], query.Options{K: 3, NProbe: 4})
	if err != nil || len(rs) != 517 {
		t.Fatalf("%d results, %v", len(rs), err)
	}
	for i, r := range rs {
		want, err := ix.Search(ctx, qs[i], query.Options{K: 3, NProbe: 4})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(r.Hits) != fmt.Sprint(want.Hits) {
			t.Fatalf("query %d: %v, want %v", i, r.Hits, want.Hits)
		}
	}
}

func TestBadRequests(t *testing.T) {
	f := newFixture(t, server.Config{Limits: serving.Limits{MaxBodyBytes: 64 << 10, MaxBatch: 4}})
	king := vec64(f.king)
	nanBody := strings.Replace(string(must(json.Marshal(map[string]any{"vector": king}))), "[", "[NaN,", 1)
	big := map[string]any{"vector": king, "pad": strings.Repeat("x", 70<<10)}
	for _, tc := range []struct {
		name   string
		path   string
		body   any
		hdr    []string
		status int
		code   string
	}{
		{"malformed JSON", "", `{"vector": [1, 2`, nil, 400, "malformed_json"},
		{"not an object", "", `[1, 2]`, nil, 400, "invalid_argument"},
		{"empty body", "", ``, nil, 400, "malformed_json"},
		{"trailing data", "", `{"key": "king"} {}`, nil, 400, "malformed_json"},
		{"wrong dimension", "", map[string]any{"vector": king[:10]}, nil, 400, "wrong_dimension"},
		{"NaN", "", nanBody, nil, 400, "invalid_vector"},
		{"float32 overflow", "", map[string]any{"vector": append([]float64{1e39}, king[1:]...)}, nil, 400, "invalid_vector"},
		{"zero vector under cosine", "", map[string]any{"vector": make([]float64, len(king))}, nil, 400, "invalid_vector"},
		{"unknown index", "/v1/indexes/nope/search", map[string]any{"vector": king}, nil, 404, "index_not_found"},
		{"invalid index name", "/v1/indexes/bad%20name/search", map[string]any{"vector": king}, nil, 400, "invalid_argument"},
		{"k = 0", "", map[string]any{"vector": king, "k": 0}, nil, 400, "out_of_range"},
		{"k huge", "", map[string]any{"vector": king, "k": 1 << 30}, nil, 400, "out_of_range"},
		{"nprobe = 0", "", map[string]any{"vector": king, "nprobe": 0}, nil, 400, "out_of_range"},
		{"refine negative", "", map[string]any{"vector": king, "refine": -1}, nil, 400, "out_of_range"},
		{"batch too large", "", map[string]any{"vectors": [][]float64{king, king, king, king, king}}, nil, 400, "out_of_range"},
		{"timeout_ms too large", "", map[string]any{"vector": king, "timeout_ms": 1 << 40}, nil, 400, "out_of_range"},
		{"no query", "", map[string]any{"k": 3}, nil, 400, "invalid_argument"},
		{"two queries", "", map[string]any{"vector": king, "key": "king"}, nil, 400, "invalid_argument"},
		{"unknown field", "", map[string]any{"vector": king, "topk": 3}, nil, 400, "invalid_argument"},
		{"wrong type", "", map[string]any{"vector": king, "k": "ten"}, nil, 400, "invalid_argument"},
		{"unknown column", "", map[string]any{"vector": king, "columns": []string{"nope"}}, nil, 400, "unknown_column"},
		{"key not found", "", map[string]any{"key": "no-such-word-xyz"}, nil, 404, "key_not_found"},
		{"snapshot not found", "", map[string]any{"vector": king, "snapshot": 99}, nil, 404, "snapshot_not_found"},
		{"oversized body", "", big, nil, 413, "body_too_large"},
		{"wrong content type", "", map[string]any{"vector": king}, []string{"Content-Type", "text/plain"}, 415, "unsupported_media_type"},
		{"unknown route", "/v1/nope", map[string]any{}, nil, 404, "not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = "/v1/indexes/words/search"
			}
			status, m := f.post(t, path, tc.body, tc.hdr...)
			if status != tc.status || errCode(m) != tc.code {
				t.Fatalf("got %d %q, want %d %q: %v", status, errCode(m), tc.status, tc.code, m)
			}
			if msg := m["error"].(map[string]any)["message"]; msg == "" {
				t.Fatal("empty message")
			}
		})
	}
	t.Run("method not allowed", func(t *testing.T) {
		status, m := f.get(t, "/v1/indexes/words/search")
		if status != 405 || errCode(m) != "method_not_allowed" {
			t.Fatalf("got %d %v", status, m)
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestToken(t *testing.T) {
	tok, err := serving.NewToken("s3cret-token")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, server.Config{Token: tok})
	body := map[string]any{"key": "king", "k": 1}
	for _, tc := range []struct {
		name, auth string
		status     int
		code       string
	}{
		{"missing token", "", 401, "unauthenticated"},
		{"wrong token", "Bearer s3cret-tokeX", 401, "unauthenticated"},
		{"prefix of the token", "Bearer s3cret", 401, "unauthenticated"},
		{"basic is not for HTTP", "Basic dTpzM2NyZXQtdG9rZW4=", 401, "unauthenticated"},
		{"right token", "Bearer s3cret-token", 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, m := f.post(t, "/v1/indexes/words/search", body, "Authorization", tc.auth)
			if status != tc.status || errCode(m) != tc.code {
				t.Fatalf("got %d %q, want %d %q", status, errCode(m), tc.status, tc.code)
			}
		})
	}
	t.Run("health needs no token", func(t *testing.T) {
		if status, _ := f.get(t, "/healthz"); status != 200 {
			t.Fatalf("healthz %d", status)
		}
	})
	t.Run("metrics need the token", func(t *testing.T) {
		resp, err := http.Get(f.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("metrics without token: %d", resp.StatusCode)
		}
	})
}

func TestListenRule(t *testing.T) {
	tok, _ := serving.NewToken("x")
	for _, tc := range []struct {
		addr  string
		token bool
		ok    bool
	}{
		{"127.0.0.1:7878", false, true},
		{"[::1]:7878", false, true},
		{"localhost:7878", false, true},
		{"0.0.0.0:7878", false, false},
		{":7878", false, false},
		{"192.168.1.4:7878", false, false},
		{"0.0.0.0:7878", true, true},
	} {
		var tk serving.Token
		if tc.token {
			tk = tok
		}
		if err := serving.CheckListen(tc.addr, tk); (err == nil) != tc.ok {
			t.Errorf("CheckListen(%q, token %v) = %v", tc.addr, tc.token, err)
		}
	}
	if s := fmt.Sprint(tok); strings.Contains(s, "x)") || s != "Token(set)" {
		t.Errorf("token prints as %q", s)
	}
}

func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/tok"
	if err := os.WriteFile(p, []byte("  abc123 \n# ignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok, err := serving.ReadTokenFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !tok.Check("abc123") || tok.Check("abc12") || !tok.CheckAuthorization("Basic "+"dXNlcjphYmMxMjM=", true) {
		t.Fatal("token file not read as the first trimmed line")
	}
	if err := os.WriteFile(p, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := serving.ReadTokenFile(p); err == nil {
		t.Fatal("empty token file accepted")
	}
}

func TestListDescribeHealthMetricsOpenAPI(t *testing.T) {
	f := newFixture(t, server.Config{})
	status, m := f.get(t, "/v1/indexes")
	if status != 200 || fmt.Sprint(m["indexes"]) != "[map[name:words]]" {
		t.Fatalf("list: %d %v", status, m)
	}
	status, m = f.get(t, "/v1/indexes/words")
	if status != 200 || m["dimension"].(json.Number) != json.Number(strconv.Itoa(f.dim)) || m["metric"] != "cosine" ||
		m["encoding"] != "lvq8" || m["current_snapshot_id"].(json.Number) != "1" || fmt.Sprint(m["key_fields"]) != "[word]" {
		t.Fatalf("describe: %d %v", status, m)
	}
	if status, m = f.get(t, "/v1/indexes/none"); status != 404 || errCode(m) != "index_not_found" {
		t.Fatalf("describe unknown: %d %v", status, m)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if status, m = f.get(t, p); status != 200 {
			t.Fatalf("%s: %d %v", p, status, m)
		}
	}
	f.post(t, "/v1/indexes/words/search", map[string]any{"key": "king"})
	f.post(t, "/v1/indexes/words/search", map[string]any{"key": "king", "where": "rank > 10"})
	resp, err := http.Get(f.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, name := range []string{
		`parqdb_http_requests_total{code="200",method="POST",route="/v1/indexes/{name}/search"} 2`,
		"parqdb_http_request_duration_seconds_bucket", "parqdb_search_queries_total{index=\"words\"} 2",
		"parqdb_storage_requests_total", "parqdb_storage_read_bytes_total", "parqdb_open_snapshots 1",
		"parqdb_postings_cache_queries_total", "parqdb_snapshot_cache_hits_total", "go_goroutines",
		"parqdb_cache_limit_bytes ", `parqdb_cache_lookups_total{cache="postings",result="miss"}`,
		`parqdb_cache_lookups_total{cache="postings",result="hit"}`, `parqdb_cache_hit_ratio{cache="postings"}`,
		`parqdb_cache_bytes{cache="postings"}`, `parqdb_cache_evictions_total{cache="pages"}`,
		`parqdb_cache_lookups_total{cache="rows",result="miss"}`, `parqdb_cache_bytes{cache="rows"}`,
		`parqdb_cache_lookups_total{cache="filters",result="miss"}`, `parqdb_cache_hit_ratio{cache="filters"}`,
	} {
		if !strings.Contains(string(text), name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	resp, err = http.Get(f.url + "/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	file, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, file) {
		t.Fatal("/openapi.yaml differs from server/openapi.yaml")
	}
}

// TestOpenAPIDocumentsAPI checks that every route and every error code is
// in the OpenAPI document.
func TestOpenAPIDocumentsAPI(t *testing.T) {
	doc := string(server.OpenAPI)
	for _, p := range []string{"/healthz:", "/readyz:", "/openapi.yaml:", "/metrics:", "/v1/indexes:", "/v1/indexes/{name}:", "/v1/indexes/{name}/search:"} {
		if !strings.Contains(doc, "\n  "+p) {
			t.Errorf("path %s is not documented", p)
		}
	}
	for _, c := range []string{
		serving.CodeMalformedJSON, serving.CodeInvalidArgument, serving.CodeWrongDimension, serving.CodeInvalidVector,
		serving.CodeOutOfRange, serving.CodeUnknownColumn, serving.CodeSQLError, serving.CodeUnauthenticated,
		serving.CodeFilterSyntax, serving.CodeFilterColumn, serving.CodeFilterType,
		serving.CodeSourceNotBound, serving.CodeIndexNotFound, serving.CodeSnapshotNotFound, serving.CodeKeyNotFound, serving.CodeKeyNotIndexed,
		serving.CodeNotFound, serving.CodeMethodNotAllowed, serving.CodeTimeout, serving.CodeStaleIndex,
		serving.CodeBodyTooLarge, serving.CodeUnsupportedMediaType, serving.CodeInternal, serving.CodeUnavailable, serving.CodeOverloaded,
	} {
		if !strings.Contains(doc, "- "+c+" ") {
			t.Errorf("error code %s is not documented", c)
		}
	}
}

func TestAsError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code string
	}{
		{query.ErrStale, serving.CodeStaleIndex},
		{fmt.Errorf("x: %w", query.ErrBadQuery), serving.CodeInvalidArgument},
		{context.DeadlineExceeded, serving.CodeTimeout},
		{serving.ErrSourceNotBound, serving.CodeSourceNotBound},
		{errors.New("boom"), serving.CodeInternal},
	} {
		if got := serving.AsError(tc.err).Code; got != tc.code {
			t.Errorf("AsError(%v) = %s, want %s", tc.err, got, tc.code)
		}
	}
}
