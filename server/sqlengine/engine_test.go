//go:build duckdb

package sqlengine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server/serving"
	"github.com/parqdb/parqdb/server/sqlengine"
	"github.com/parqdb/parqdb/storage"
)

func newEngine(t *testing.T) (*sqlengine.Engine, *query.Index) {
	t.Helper()
	return newEngineWith(t, sqlengine.Options{})
}

func newEngineWith(t testing.TB, opts sqlengine.Options) (*sqlengine.Engine, *query.Index) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	wh, err := storage.NewLocal(filepath.Join(dir, "wh"))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.OpenSQLite(ctx, filepath.Join(dir, "wh", "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	src, _ := filepath.Abs("../../examples/glove/glove-10k.parquet")
	if _, err := indexer.Create(ctx, indexer.Env{Warehouse: wh, Catalog: cat}, indexer.Options{
		Name: "words", Source: src, VectorField: "embedding", KeyFields: []string{"word"}, Metric: "cosine", NList: 64,
	}); err != nil {
		t.Fatal(err)
	}
	env := query.Env{Warehouse: wh, Catalog: cat}
	pool := serving.NewPool(env, serving.PoolOptions{RefreshInterval: -1})
	t.Cleanup(func() { pool.Close() })
	e, err := sqlengine.New(pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	ix, err := query.Open(ctx, env, "words", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return e, ix
}

// rows runs a statement and returns its rows as column → value maps.
func rows(t *testing.T, e *sqlengine.Engine, stmt string) ([]string, []map[string]any) {
	t.Helper()
	rr, err := e.Query(context.Background(), stmt)
	if err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	defer rr.Release()
	var names []string
	for _, f := range rr.Schema().Fields() {
		names = append(names, f.Name)
	}
	var out []map[string]any
	for rr.Next() {
		rec := rr.RecordBatch()
		for r := 0; r < int(rec.NumRows()); r++ {
			m := map[string]any{}
			for c, n := range names {
				// Values may alias the record's memory: copy them now.
				b, err := json.Marshal(rec.Column(c).GetOneForMarshal(r))
				if err != nil {
					t.Fatal(err)
				}
				m[n] = string(b)
			}
			out = append(out, m)
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	return names, out
}

func vectorText(v []float32) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestIVFSearchEqualsQuery(t *testing.T) {
	e, ix := newEngine(t)
	ctx := context.Background()
	vals, _ := ix.ParseKey([]string{"king"})
	king, err := ix.VectorOf(ctx, vals)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, sql string
		opts      query.Options
	}{
		{"by key", "SELECT * FROM ivf_search_key('words', 'king', 10)", query.Options{K: 10, NProbe: 8}},
		{"by vector with options", fmt.Sprintf("SELECT * FROM ivf_search('words', '%s', 7, nprobe := 16, refine := 3)", vectorText(king)),
			query.Options{K: 7, NProbe: 16, Refine: 3}},
		{"snapshot (positional options)", "SELECT * FROM ivf_search_key('words', 'king', 4, 8, 0, 1)", query.Options{K: 4, NProbe: 8}},
		{"named snapshot and NULL nprobe", "SELECT * FROM ivf_search_key('words', 'king', 4, snapshot := 1, nprobe := NULL)", query.Options{K: 4, NProbe: 8}},
		{"columns list", "SELECT * FROM ivf_search_key('words', 'king', 6, columns := ['rank', 'word'], refine := 2)",
			query.Options{K: 6, NProbe: 8, Refine: 2, Columns: []string{"rank", "word"}}},
		{"columns string", "SELECT * FROM ivf_search_key('words', 'king', 6, columns := 'word')", query.Options{K: 6, NProbe: 8, Columns: []string{"word"}}},
		{"named filter", "SELECT * FROM ivf_search_key('words', 'king', 5, filter := 'rank > 100', nprobe := 16)",
			query.Options{K: 5, NProbe: 16, Filter: mustParse(t, "rank > 100")}},
		{"named where", `SELECT * FROM ivf_search_key('words', 'king', 5, "where" := 'rank > 100')`,
			query.Options{K: 5, NProbe: 8, Filter: mustParse(t, "rank > 100")}},
		{"recall", "SELECT * FROM ivf_search_key('words', 'king', 10, recall := 0.95)", query.Options{K: 10, Recall: 0.95}},
		{"recall, where and columns", "SELECT * FROM ivf_search_key_where('words', 'king', 5, 'rank > 100', recall := 0.9, columns := 'word')",
			query.Options{K: 5, Recall: 0.9, Columns: []string{"word"}, Filter: mustParse(t, "rank > 100")}},
		{"where by key", "SELECT * FROM ivf_search_key_where('words', 'king', 10, 'rank > 5000 AND word LIKE ''p%''')",
			query.Options{K: 10, NProbe: 8, Filter: mustParse(t, "rank > 5000 AND word LIKE 'p%'")}},
		{"where by vector with options", fmt.Sprintf("SELECT * FROM ivf_search_where('words', '%s', 7, 'rank <= 3', nprobe := 16, refine := 3)", vectorText(king)),
			query.Options{K: 7, NProbe: 16, Refine: 3, Filter: mustParse(t, "rank <= 3")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cols, got := rows(t, e, tc.sql)
			want, err := ix.Search(ctx, king, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(cols) != fmt.Sprint(want.Columns) || len(got) != len(want.Hits) {
				t.Fatalf("columns %v, %d rows; want %v, %d", cols, len(got), want.Columns, len(want.Hits))
			}
			for i, h := range want.Hits {
				for _, c := range want.Columns {
					w := any(h.Distance)
					if c != "_distance" {
						w = h.Row[c]
					}
					gj := got[i][c].(string)
					wj, _ := json.Marshal(w)
					if gj != string(wj) {
						t.Fatalf("row %d %s: %s, want %s", i, c, gj, wj)
					}
				}
			}
		})
	}
	t.Run("join and filter", func(t *testing.T) {
		_, got := rows(t, e, `SELECT r.word, r._distance FROM ivf_search_key('words', 'king', 10) r
			WHERE r.word <> 'king' ORDER BY r._distance DESC`)
		first, _ := strconv.ParseFloat(got[0]["_distance"].(string), 32)
		last, _ := strconv.ParseFloat(got[8]["_distance"].(string), 32)
		if len(got) != 9 || first < last || got[8]["word"] == `"king"` {
			t.Fatalf("got %v", got)
		}
	})
}

func TestSQLErrors(t *testing.T) {
	e, ix := newEngine(t)
	good := vectorText(make([]float32, ix.Dim()))
	one := make([]float32, ix.Dim())
	one[0] = 1
	for _, tc := range []struct {
		name, sql, code string
	}{
		{"syntax", "SELEC 1", serving.CodeSQLError},
		{"unknown table function", "SELECT * FROM nope('x')", serving.CodeSQLError},
		{"unknown index", "SELECT * FROM ivf_search_key('nope', 'king', 10)", serving.CodeIndexNotFound},
		{"k = 0", "SELECT * FROM ivf_search_key('words', 'king', 0)", serving.CodeOutOfRange},
		{"k huge", "SELECT * FROM ivf_search_key('words', 'king', 100000000)", serving.CodeOutOfRange},
		{"wrong dimension", "SELECT * FROM ivf_search('words', '[1, 2, 3]', 5)", serving.CodeWrongDimension},
		{"NaN", "SELECT * FROM ivf_search('words', '[NaN, 1]', 5)", serving.CodeInvalidVector},
		{"zero vector", "SELECT * FROM ivf_search('words', '" + good + "', 5)", serving.CodeInvalidVector},
		{"not a vector", "SELECT * FROM ivf_search('words', 'king', 5)", serving.CodeInvalidArgument},
		{"unknown column", "SELECT nope FROM ivf_search('words', '" + vectorText(one) + "', 5)", serving.CodeSQLError},
		{"snapshot not found", "SELECT * FROM ivf_search_key('words', 'king', 5, snapshot := 99)", serving.CodeSnapshotNotFound},
		{"nprobe = 0", "SELECT * FROM ivf_search('words', '" + vectorText(one) + "', 5, 0)", serving.CodeOutOfRange},
		{"key not found", "SELECT * FROM ivf_search_key('words', 'no-such-word-xyz', 5)", serving.CodeKeyNotFound},
		{"no file access", "SELECT * FROM read_csv('/etc/passwd')", serving.CodeSQLError},
		{"NULL vector", "SELECT * FROM ivf_search('words', NULL, 5)", serving.CodeInvalidArgument},
		{"typed NULL k", "SELECT * FROM ivf_search_key('words', 'king', CAST(NULL AS BIGINT))", serving.CodeInvalidArgument},
		{"NULL nprobe", "SELECT * FROM ivf_search_key('words', 'king', 5, nprobe := NULL)", ""},
		{"internal function", "SELECT * FROM parqdb_internal_ivf_search_x('words', NULL, 5, 1, 1, 1)", serving.CodeSQLError},
		{"settings are locked", "SET enable_external_access = true", serving.CodeSQLError},
		{"where syntax", "SELECT * FROM ivf_search_key_where('words', 'king', 5, 'rank <')", serving.CodeFilterSyntax},
		{"where column", "SELECT * FROM ivf_search_key_where('words', 'king', 5, 'rnk < 5')", serving.CodeFilterColumn},
		{"where type", "SELECT * FROM ivf_search_key_where('words', 'king', 5, 'rank = ''x''')", serving.CodeFilterType},
		{"NULL where", "SELECT * FROM ivf_search_key_where('words', 'king', 5, NULL)", ""},
		{"NULL column name", "SELECT * FROM ivf_search_key('words', 'king', 5, columns := ['word', NULL])", serving.CodeInvalidArgument},
		{"empty columns", "SELECT * FROM ivf_search_key('words', 'king', 5, columns := [])", serving.CodeInvalidArgument},
		{"unknown named argument", "SELECT * FROM ivf_search_key('words', 'king', 5, nope := 1)", serving.CodeSQLError},
		{"unknown name in columns", "SELECT * FROM ivf_search_key('words', 'king', 5, columns := ['nope'])", serving.CodeUnknownColumn},
		{"k not a number", "SELECT * FROM ivf_search_key('words', 'king', 'x')", serving.CodeSQLError},
		{"recall above 1", "SELECT * FROM ivf_search_key('words', 'king', 5, recall := 1.5)", serving.CodeOutOfRange},
		{"recall 0", "SELECT * FROM ivf_search_key('words', 'king', 5, recall := 0)", serving.CodeOutOfRange},
		{"recall with nprobe", "SELECT * FROM ivf_search_key('words', 'king', 5, recall := 0.9, nprobe := 4)", serving.CodeInvalidArgument},
		{"NULL recall", "SELECT * FROM ivf_search_key('words', 'king', 5, recall := NULL)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rr, err := e.Query(context.Background(), tc.sql)
			if err == nil {
				for rr.Next() {
				}
				err = rr.Err()
				rr.Release()
			}
			if tc.code == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				return
			}
			var ae *serving.Error
			if !errors.As(err, &ae) || ae.Code != tc.code {
				t.Fatalf("got %v, want code %s", err, tc.code)
			}
			if tc.code == serving.CodeSQLError && !errors.Is(err, sqlengine.ErrSQL) {
				t.Fatalf("%v does not wrap ErrSQL", err)
			}
		})
	}
}

func TestPrint(t *testing.T) {
	e, _ := newEngine(t)
	for _, tc := range []struct{ format, want string }{
		{"json", `{"word":"king","rank":`},
		{"csv", "word,rank,_distance\nking,"},
		{"table", "word "},
	} {
		var b strings.Builder
		if err := e.Print(context.Background(), "SELECT word, rank, _distance FROM ivf_search_key('words', 'king', 3)", &b, tc.format); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(b.String(), tc.want) || strings.Count(b.String(), "\n") < 3 {
			t.Errorf("%s: %q", tc.format, b.String())
		}
	}
	_ = array.RecordReader(nil)
}

// queryErr runs a statement to its end and returns its error.
func queryErr(e *sqlengine.Engine, stmt string) error {
	rr, err := e.Query(context.Background(), stmt)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
	}
	return rr.Err()
}

// TestSQLAdmission: the table functions go through the server's
// Admitter: with its one running slot taken, a search waits in the queue
// until the time limit (timeout) or, the queue full, is refused at once
// (overloaded); once the slot frees, it runs.
func TestSQLAdmission(t *testing.T) {
	const stmt = "SELECT * FROM ivf_search_key('words', 'king', 5)"
	for _, tc := range []struct {
		name  string
		queue int
		code  string
	}{
		{"queue full", -1, serving.CodeOverloaded},
		{"deadline while queued", 1, serving.CodeTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			adm := serving.NewAdmitter(serving.LoadLimits{MaxConcurrent: 1, MaxQueue: tc.queue})
			e, _ := newEngineWith(t, sqlengine.Options{Admitter: adm, Limits: serving.Limits{Timeout: 300 * time.Millisecond}})
			release, err := adm.Admit(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			err = queryErr(e, stmt)
			var ae *serving.Error
			if !errors.As(err, &ae) || ae.Code != tc.code {
				t.Fatalf("got %v, want code %s", err, tc.code)
			}
			// A generous ceiling, for a busy machine: a queued search that
			// ignored the 300 ms limit would wait for the slot, which frees
			// only after this check; the code above tells refused from
			// timed out.
			took := time.Since(start)
			t.Logf("%s after %v", tc.code, took)
			if took > 10*time.Second {
				t.Fatalf("answered after %v", took)
			}
			release()
			if err := queryErr(e, stmt); err != nil {
				t.Fatalf("with the slot free: %v", err)
			}
		})
	}
}

// TestSearchKeyBase64: ivf_search_key takes the lossless {"base64": …}
// key form that JSON output gives binary and non-UTF-8 values.
func TestSearchKeyBase64(t *testing.T) {
	e, _ := newEngine(t)
	_, got := rows(t, e, `SELECT word FROM ivf_search_key('words', '{"base64": "a2luZw=="}', 1)`) // "king"
	if len(got) != 1 || got[0]["word"] != `"king"` {
		t.Fatalf("got %v, want the row of king", got)
	}
}

func mustParse(t *testing.T, where string) *filter.Predicate {
	t.Helper()
	p, err := filter.Parse(where)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
