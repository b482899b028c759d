//go:build duckdb

package sqlengine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server/serving"
	"github.com/parqdb/parqdb/server/sqlengine"
)

// TestNearestPerRow: one statement searches once per row of a 1,000-row
// table (ivf_nearest over the source view) and returns, for every row,
// what a single search with that row's vector and the same options
// returns: the same rows in the same order, the same distances. The rows
// of a chunk are searched as batches of rows with equal options: the
// second statement gives rows different k and nprobe, and NULL vectors.
func TestNearestPerRow(t *testing.T) {
	// without an Admitter (parqdb sql) and with one (parqdb serve: the
	// batches run on its query slots)
	for _, admit := range []bool{false, true} {
		t.Run(fmt.Sprintf("admitter=%v", admit), func(t *testing.T) {
			var opts sqlengine.Options
			if admit {
				opts.Admitter = serving.NewAdmitter(serving.LoadLimits{})
			}
			testNearestPerRow(t, opts)
		})
	}
}

func testNearestPerRow(t *testing.T, eo sqlengine.Options) {
	e, ix := newEngineWith(t, eo)
	ctx := context.Background()
	for _, tc := range []struct {
		name, stmt string
		opts       func(rank int64) (k, nprobe int, null bool)
	}{
		{"same options", `SELECT q.rank, q.embedding, ivf_nearest('words', q.embedding, 5, nprobe := 12, columns := ['word', 'rank']) AS nn
		FROM (SELECT rank, embedding FROM words ORDER BY rank LIMIT 1000) q`,
			func(int64) (int, int, bool) { return 5, 12, false }},
		{"options per row", `SELECT q.rank, q.embedding, ivf_nearest('words', CASE WHEN q.rank % 7 = 0 THEN NULL ELSE q.embedding END,
			3 + q.rank % 3, nprobe := 8 + 4 * (q.rank % 2), columns := ['word', 'rank']) AS nn
		FROM (SELECT rank, embedding FROM words ORDER BY rank LIMIT 1000) q`,
			func(r int64) (int, int, bool) { return 3 + int(r%3), 8 + 4*int(r%2), r%7 == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rr, err := e.Query(ctx, tc.stmt)
			if err != nil {
				t.Fatal(err)
			}
			defer rr.Release()
			n, nulls := 0, 0
			for rr.Next() {
				rec := rr.RecordBatch()
				for r := 0; r < int(rec.NumRows()); r++ {
					var rank int64
					var vec []float32
					var nn []struct {
						Distance float32         `json:"_distance"`
						Row      json.RawMessage `json:"_row"`
					}
					for c, dst := range []any{&rank, &vec, &nn} {
						b, _ := json.Marshal(rec.Column(c).GetOneForMarshal(r))
						if err := json.Unmarshal(b, dst); err != nil {
							t.Fatalf("row %d column %d: %v: %s", n, c, err, b)
						}
					}
					n++
					k, nprobe, null := tc.opts(rank)
					if null {
						if nn != nil {
							t.Fatalf("rank %d: a NULL vector gave %d hits, want NULL", rank, len(nn))
						}
						nulls++
						continue
					}
					want, err := ix.Search(ctx, vec, query.Options{K: k, NProbe: nprobe, Columns: []string{"word", "rank"}})
					if err != nil {
						t.Fatal(err)
					}
					if len(nn) != len(want.Hits) {
						t.Fatalf("rank %d: %d hits, want %d", rank, len(nn), len(want.Hits))
					}
					for i, jr := range want.JSONRows() {
						wrow, _ := jr.MarshalJSON()
						var grow string // the JSON type travels as text
						if err := json.Unmarshal(nn[i].Row, &grow); err != nil {
							grow = string(nn[i].Row)
						}
						if nn[i].Distance != jr.Distance || grow != string(wrow) {
							t.Fatalf("rank %d hit %d: %v %s, want %v %s", rank, i, nn[i].Distance, grow, jr.Distance, wrow)
						}
					}
				}
			}
			if err := rr.Err(); err != nil {
				t.Fatal(err)
			}
			if n != 1000 {
				t.Fatalf("%d rows, want 1000", n)
			}
			if _, _, null := tc.opts(0); null && nulls == 0 {
				t.Fatal("no NULL vectors among the rows")
			}
		})
	}
}

// TestNearestArguments: NULL vectors give NULL; bad arguments fail with
// the API's codes and name the argument.
func TestNearestArguments(t *testing.T) {
	e, _ := newEngine(t)
	_, got := rows(t, e, "SELECT ivf_nearest('words', CAST(NULL AS FLOAT[]), 3) AS nn")
	if len(got) != 1 || got[0]["nn"] != "null" {
		t.Errorf("NULL vector: %v", got)
	}
	_, got = rows(t, e, `SELECT len(ivf_nearest('words', (SELECT embedding FROM words WHERE word = 'king'), 3, refine := NULL)) AS n`)
	if len(got) != 1 || got[0]["n"] != "3" {
		t.Errorf("NULL refine: %v", got)
	}
	for _, tc := range []struct{ stmt, want string }{
		{"SELECT ivf_nearest('words', [1.0, 2.0], 3)", "wrong_dimension"},
		{"SELECT ivf_nearest(NULL, [1.0, 2.0], 3)", "index_name"},
		{"SELECT ivf_nearest('words', (SELECT embedding FROM words LIMIT 1), NULL)", "k must be"},
		{"SELECT ivf_nearest('nope', [1.0, 2.0], 3)", "nope"},
		{"SELECT ivf_nearest('words', (SELECT embedding FROM words LIMIT 1), 3, columns := ['nope'])", "nope"},
	} {
		err := queryErr(e, tc.stmt)
		if err == nil || !containsFold(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.stmt, err, tc.want)
		}
	}
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// TestNearestKeyPerRow: ivf_nearest_key searches near each row's key, as
// ivf_search_key does for one key.
func TestNearestKeyPerRow(t *testing.T) {
	e, _ := newEngine(t)
	_, got := rows(t, e, `SELECT q.word, to_json(ivf_nearest_key('words', q.word, 4, nprobe := 16)) AS nn
		FROM (SELECT word FROM words ORDER BY rank LIMIT 200) q`)
	if len(got) != 200 {
		t.Fatalf("%d rows, want 200", len(got))
	}
	for _, r := range got {
		var word, nnText string
		if err := json.Unmarshal([]byte(r["word"].(string)), &word); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(r["nn"].(string)), &nnText); err != nil {
			nnText = r["nn"].(string)
		}
		var nn []struct {
			Distance float32        `json:"_distance"`
			Row      map[string]any `json:"_row"`
		}
		if err := json.Unmarshal([]byte(nnText), &nn); err != nil {
			t.Fatalf("%s: %v: %s", word, err, nnText)
		}
		_, want := rows(t, e, "SELECT word, _distance FROM ivf_search_key('words', "+sqlString(word)+", 4, nprobe := 16)")
		if len(nn) != len(want) {
			t.Fatalf("%s: %d hits, want %d", word, len(nn), len(want))
		}
		for i, w := range want {
			wd, _ := json.Marshal(nn[i].Distance)
			ww, _ := json.Marshal(nn[i].Row["word"])
			if string(ww) != w["word"] || string(wd) != w["_distance"] {
				t.Fatalf("%s hit %d: %v %v, want %v", word, i, nn[i].Row["word"], nn[i].Distance, w)
			}
		}
	}
}

// TestSearchKeyWithComma: a one-field key is the whole text, commas
// included (the GloVe vocabulary has ","); only composite keys split.
func TestSearchKeyWithComma(t *testing.T) {
	e, _ := newEngine(t)
	_, got := rows(t, e, "SELECT word FROM ivf_search_key('words', ',', 1)")
	if len(got) != 1 || got[0]["word"] != `","` {
		t.Fatalf("got %v, want the row of \",\"", got)
	}
}

// BenchmarkNearest: one statement searching once for each of the 10,000
// rows of the source view (5 nearest, the word column), the SQL form of
// a self-join.
func BenchmarkNearest(b *testing.B) {
	e, _ := newEngineWith(b, sqlengine.Options{})
	ctx := context.Background()
	for b.Loop() {
		rr, err := e.Query(ctx, `SELECT count(*) FROM (SELECT unnest(ivf_nearest('words', embedding, 5, columns := ['word'])) FROM words)`)
		if err != nil {
			b.Fatal(err)
		}
		var n any
		for rr.Next() {
			n = rr.RecordBatch().Column(0).GetOneForMarshal(0)
		}
		if err := rr.Err(); err != nil {
			b.Fatal(err)
		}
		rr.Release()
		if fmt.Sprint(n) != "50000" {
			b.Fatalf("%v hits, want 5 for each of 10,000 rows", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e4, "ns/query")
}
