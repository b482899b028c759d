//go:build duckdb

package sqlengine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/parqdb/parqdb/server/serving"
	"github.com/parqdb/parqdb/server/sqlengine"
)

// TestPrepareAndQueryArgs: Prepare reports a statement's parameters
// without running it, and QueryArgs with values returns what the
// statement with the same literals returns.
func TestPrepareAndQueryArgs(t *testing.T) {
	e, _ := newEngine(t)
	ctx := context.Background()
	for _, tc := range []struct {
		sql  string
		want []duckdb.Type
	}{
		{"SELECT * FROM ivf_search_key('words', ?, 3)", []duckdb.Type{duckdb.TYPE_VARCHAR}},
		{"SELECT ?::INTEGER + 1 AS x, ?::VARCHAR AS y", []duckdb.Type{duckdb.TYPE_INTEGER, duckdb.TYPE_VARCHAR}},
		{"SELECT 1", nil},
	} {
		p, err := e.Prepare(ctx, tc.sql)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if fmt.Sprint(p.Params) != fmt.Sprint(tc.want) {
			t.Errorf("%s: parameters %v, want %v", tc.sql, p.Params, tc.want)
		}
	}
	for _, bad := range []string{"SELEC 1", "SELECT * FROM parqdb_internal_ivf_search_x('words', ?, 3)"} {
		_, err := e.Prepare(ctx, bad)
		if !errors.Is(err, sqlengine.ErrSQL) || serving.AsError(err).Code != serving.CodeSQLError {
			t.Errorf("Prepare(%q): %v, want a sql_error", bad, err)
		}
	}
	rr, err := e.QueryArgs(ctx, "SELECT word, _distance FROM ivf_search_key('words', ?, ?)", []any{"king", int64(4)})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(collect(t, rr))
	_, want := rows(t, e, "SELECT word, _distance FROM ivf_search_key('words', 'king', 4)")
	if got != fmt.Sprint(want) {
		t.Fatalf("QueryArgs: %s\nwant %v", got, want)
	}
	if _, err := e.QueryArgs(ctx, "SELECT * FROM ivf_search_key('nope', ?, 3)", []any{"king"}); serving.AsError(err).Code != serving.CodeIndexNotFound {
		t.Fatalf("unknown index: %v, want index_not_found", err)
	}
}

// collect reads a result as JSON texts per row.
func collect(t *testing.T, rr array.RecordReader) []map[string]any {
	t.Helper()
	defer rr.Release()
	var out []map[string]any
	for rr.Next() {
		rec := rr.RecordBatch()
		for r := 0; r < int(rec.NumRows()); r++ {
			m := map[string]any{}
			for c, f := range rec.Schema().Fields() {
				b, _ := json.Marshal(rec.Column(c).GetOneForMarshal(r))
				m[f.Name] = string(b)
			}
			out = append(out, m)
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
