package server

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net/http/httptest"
	"reflect"
	"slices"
	"testing"

	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/query/rowjson"
	"github.com/parqdb/parqdb/server/serving"
)

// encodeResponse is encodeResponseTo into a fresh buffer.
func encodeResponse(ctx context.Context, resp *SearchResponse) ([]byte, error) {
	return encodeResponseTo(ctx, new(bytes.Buffer), resp)
}

// TestEncodeResponse: the answer encoded row by row is byte for byte what
// one json.Encoder gives, and encoding past the deadline is a 504 timeout.
func TestEncodeResponse(t *testing.T) {
	cols := []string{"word", "<b>", "_distance"}
	mk := func() *SearchResponse {
		hits := []query.Hit{
			{Distance: 0.5, Row: map[string]any{"word": "a&b", "<b>": []byte("x\xffy")}},
			{Distance: 1, Row: map[string]any{"word": "ü", "<b>": int64(3)}},
		}
		r := &query.Result{Columns: cols, Hits: hits}
		return &SearchResponse{Index: "words", SnapshotID: 3, Columns: cols,
			Results: [][]rowjson.Row{r.JSONRows(), {}, r.JSONRows()[:1]}, Stats: searchStats{Lists: 1, Candidates: 2, Refined: 3, Requests: 4, BytesRead: 5}}
	}
	rec := httptest.NewRecorder()
	if err := writeJSON(rec, 200, mk()); err != nil {
		t.Fatal(err)
	}
	got, err := encodeResponse(context.Background(), mk())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, rec.Body.Bytes()) {
		t.Fatalf("encodeResponse:\n%s\njson.Encoder:\n%s", got, rec.Body.Bytes())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = encodeResponse(ctx, mk())
	if e := serving.AsError(err); e.Code != serving.CodeTimeout || e.Status != 504 {
		t.Fatalf("encoding after the deadline: %v, want 504 timeout", err)
	}
}

// TestEncodeResponseCachedRows: rows whose JSON comes from the rowJSON
// cache (a row answered before, by key, per source state and column list)
// are byte for byte what json.Encoder gives, with each answer's own
// distance, and the cache is used.
func TestEncodeResponseCachedRows(t *testing.T) {
	b := membudget.New(1 << 20)
	c := newRowJSON(b)
	defer c.close()
	for _, tc := range []struct {
		state string
		cols  []string
		dist  float32
	}{
		{"s1", []string{"word", "vec", "_distance"}, 0.5},
		{"s1", []string{"word", "vec", "_distance"}, 0.25}, // cached rows, other distances
		{"s1", []string{"vec", "_distance"}, 1e-7},         // another column list
		{"s1", []string{"word", "vec", "_distance"}, 3},
		{"s2", []string{"word", "vec", "_distance"}, 2}, // another source state, other values
	} {
		mk := func(cached bool) *SearchResponse {
			w := "a<b>"
			if tc.state == "s2" {
				w = "changed"
			}
			hits := []query.Hit{
				{Key: []byte("k1"), Distance: tc.dist, Row: map[string]any{"word": w, "vec": []any{float32(0.1), float32(-2e-7), float32(3e21)}}},
				{Key: []byte("k2"), Distance: tc.dist * 2, Row: map[string]any{"word": "ü\xff", "vec": []any{}}},
				{Distance: tc.dist * 3, Row: map[string]any{"word": "nokey", "vec": nil}},
			}
			for i := range hits {
				for k := range hits[i].Row {
					if !slices.Contains(tc.cols, k) {
						delete(hits[i].Row, k)
					}
				}
			}
			r := &query.Result{Columns: tc.cols, Hits: hits}
			resp := &SearchResponse{Index: "words", SnapshotID: 3, Columns: tc.cols,
				Results: [][]rowjson.Row{r.JSONRows(), r.JSONRows()[1:]}}
			if cached {
				resp.rows = newRowEncoderFor(c, []byte(tc.state), tc.cols)
			}
			return resp
		}
		rec := httptest.NewRecorder()
		if err := writeJSON(rec, 200, mk(false)); err != nil {
			t.Fatal(err)
		}
		got, err := encodeResponse(context.Background(), mk(true))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, rec.Body.Bytes()) {
			t.Fatalf("%s %v: encodeResponse with cached rows:\n%s\njson.Encoder:\n%s", tc.state, tc.cols, got, rec.Body.Bytes())
		}
	}
	var st membudget.Stats
	for _, s := range b.Stats() {
		if s.Name == "http-rows" {
			st = s
		}
	}
	if st.Hits == 0 || st.Bytes == 0 {
		t.Errorf("http-rows cache: %+v, want hits and bytes held", st)
	}
}

// TestEncodeResponseMembers: the members around the rows (index name,
// columns, stats with and without their omitempty counters) are byte for
// byte what json.Encoder gives, names that need escaping included.
func TestEncodeResponseMembers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	names := []string{"words", `a"b`, `back\slash`, "ü\xff", "line\u2028sep", "<&>", "tab\there", "\x00", ""}
	for i := 0; i < 200; i++ {
		name := names[i%len(names)]
		var cols []string
		if i%5 != 0 {
			cols = []string{names[(i+1)%len(names)], "_distance"}
		}
		st := searchStats{}
		v := reflect.ValueOf(&st).Elem()
		for f := 0; f < v.NumField(); f++ {
			if rng.IntN(2) == 0 {
				v.Field(f).SetInt(rng.Int64N(1<<40) - 1<<20)
			}
		}
		snap := rng.Int64()
		resp := func() *SearchResponse {
			return &SearchResponse{Index: name, SnapshotID: snap, Columns: cols, Results: [][]rowjson.Row{make([]rowjson.Row, 0)}, Stats: st}
		}
		got, err := encodeResponse(context.Background(), resp())
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		if err := writeJSON(rec, 200, resp()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, rec.Body.Bytes()) {
			t.Fatalf("encodeResponse:\n%s\njson.Encoder:\n%s", got, rec.Body.Bytes())
		}
	}
}
