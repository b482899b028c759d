package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server"
)

// TestSearchWhere checks "where": the rows equal query.Search's with the
// same filter, and bad predicates get their stable codes with the
// position in the message.
func TestSearchWhere(t *testing.T) {
	f := newFixture(t, server.Config{})
	ctx := context.Background()
	ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, where := range []string{"rank > 5000 AND word LIKE 'p%'", "rank <= 3", "rank < 0", "word IN ('queen', 'king', 'prince')"} {
		status, m := f.post(t, "/v1/indexes/words/search", map[string]any{"vector": vec64(f.king), "k": 5, "where": where, "columns": []string{"word", "rank"}})
		if status != http.StatusOK {
			t.Fatalf("%s: status %d: %v", where, status, m)
		}
		p, err := filter.Parse(where)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ix.Search(ctx, f.king, query.Options{K: 5, NProbe: 8, Filter: p, Columns: []string{"word", "rank"}})
		if err != nil {
			t.Fatal(err)
		}
		sameAsQuery(t, rowsOf(t, m, 0), want)
		st := m["stats"].(map[string]any)
		if want.Stats.FilterRows > 0 && st["filter_rows"] != json.Number(jsonInt(want.Stats.FilterRows)) {
			t.Errorf("%s: stats %v, want filter_rows %d", where, st, want.Stats.FilterRows)
		}
		// The plan chosen is reported either way: one query, one plan.
		exact, lists := st["filter_exact_plans"] == json.Number("1"), st["filter_list_plans"] == json.Number("1")
		if want.Stats.FilterRows > 0 && exact == lists || exact != (want.Stats.FilterExact == 1) || lists && st["lists"] == json.Number("0") {
			t.Errorf("%s: stats %v, want the plan chosen (query: %+v)", where, st, want.Stats)
		}
	}
	for _, tc := range []struct{ where, code, msg string }{
		{"rank <", "filter_syntax", "position 7"},
		{"rnk < 5", "filter_unknown_column", "the columns are: word, rank, embedding"},
		{"rank = 'x'", "filter_type_mismatch", `column "rank" is integer but the literal is string`},
	} {
		status, m := f.post(t, "/v1/indexes/words/search", map[string]any{"key": "king", "where": tc.where})
		msg, _ := m["error"].(map[string]any)["message"].(string)
		if status != http.StatusBadRequest || errCode(m) != tc.code || !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: %d %s %q; want 400 %s saying %q", tc.where, status, errCode(m), msg, tc.code, tc.msg)
		}
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }
