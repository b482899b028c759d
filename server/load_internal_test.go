package server

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"

	"github.com/parqdb/parqdb/query"
)

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
			Results: [][]query.JSONRow{r.JSONRows(), {}, r.JSONRows()[:1]}, Stats: searchStats{Lists: 1, Candidates: 2, Refined: 3, Requests: 4, BytesRead: 5}}
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
	if e := AsError(err); e.Code != CodeTimeout || e.Status != 504 {
		t.Fatalf("encoding after the deadline: %v, want 504 timeout", err)
	}
}
