package server

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query/rowjson"
	"github.com/parqdb/parqdb/server/serving"
)

// expiringCtx is a context whose deadline passes at its after-th Err
// call: a deadline reached in the middle of encoding, at a known point,
// without depending on the clock.
type expiringCtx struct {
	context.Context
	calls, after atomic.Int64
}

func (c *expiringCtx) Err() error {
	if c.calls.Add(1) > c.after.Load() {
		return context.DeadlineExceeded
	}
	return nil
}

// bigResponse is an answer of nq queries × k rows of a GloVe-like row
// (word, rank, a 50-float embedding).
func bigResponse(nq, k int) *SearchResponse {
	cols := []string{"word", "rank", "embedding", metadata.ReservedField}
	resp := &SearchResponse{Index: "words", SnapshotID: 1, Columns: cols}
	emb := make([]any, 50)
	for i := range emb {
		emb[i] = float32(i)
	}
	for q := range nq {
		rows := make([]rowjson.Row, k)
		for j := range rows {
			rows[j] = rowjson.Row{Columns: cols, Distance: float32(j),
				Values: map[string]any{"word": fmt.Sprint("w", q, j), "rank": int64(j), "embedding": emb}}
		}
		resp.Results = append(resp.Results, rows)
	}
	return resp
}

// TestEncodersStopAtDeadline: both encodings of an answer (JSON and Arrow,
// single and batch) look at the deadline while encoding, every
// encodeCheckRows rows: a deadline that passes
// halfway through is answered 504 timeout "while encoding the answer"
// at once. (The Arrow encoder looked once per column: 100 × 1000 rows
// were encoded in full, past the deadline.)
func TestEncodersStopAtDeadline(t *testing.T) {
	encoders := map[string]func(context.Context, *SearchResponse) ([]byte, error){
		"json": func(ctx context.Context, r *SearchResponse) ([]byte, error) {
			return encodeResponseTo(ctx, new(bytes.Buffer), r)
		},
		"arrow": encodeArrow,
	}
	for name, enc := range encoders {
		for _, shape := range []struct{ nq, k int }{{1, 1000}, {100, 1000}} {
			t.Run(fmt.Sprintf("%s %d×%d", name, shape.nq, shape.k), func(t *testing.T) {
				rows := shape.nq * shape.k
				// Unexpired, the encoder looks at least once per
				// encodeCheckRows rows.
				ctx := &expiringCtx{Context: context.Background()}
				ctx.after.Store(1 << 62)
				if _, err := enc(ctx, bigResponse(shape.nq, shape.k)); err != nil {
					t.Fatal(err)
				}
				looks := ctx.calls.Load()
				if looks < int64(rows/encodeCheckRows) {
					t.Fatalf("%d looks at the deadline for %d rows; want at least %d", looks, rows, rows/encodeCheckRows)
				}
				// Expiring halfway through: the encoder stops there.
				ctx = &expiringCtx{Context: context.Background()}
				ctx.after.Store(looks / 2)
				resp := bigResponse(shape.nq, shape.k)
				_, err := enc(ctx, resp)
				e, ok := err.(*serving.Error)
				if !ok || e.Code != serving.CodeTimeout || e.Status != 504 || !bytes.Contains([]byte(e.Message), []byte("while encoding the answer")) {
					t.Fatalf("got %v; want 504 timeout while encoding the answer", err)
				}
				if got := ctx.calls.Load(); got != looks/2+1 {
					t.Fatalf("the deadline passed at look %d; the encoder looked %d times", looks/2+1, got)
				}
			})
		}
	}
}

// TestArrowBatches: an Arrow answer is record batches of at most
// arrowBatchRows rows, holding every row in order, and the encoder drops
// each query's rows once encoded (as the JSON encoder does).
func TestArrowBatches(t *testing.T) {
	for _, shape := range []struct{ nq, k int }{{1, 0}, {1, 5}, {3, arrowBatchRows}, {10, 1000}} {
		resp := bigResponse(shape.nq, shape.k)
		if shape.k == 0 {
			resp.Results = [][]rowjson.Row{{}}
		}
		b, err := encodeArrow(context.Background(), resp)
		if err != nil {
			t.Fatal(err)
		}
		for i, rows := range resp.Results {
			if rows != nil {
				t.Fatalf("%d×%d: query %d's rows kept after encoding", shape.nq, shape.k, i)
			}
		}
		rd, err := ipc.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		n, batches := 0, 0
		for rd.Next() {
			rec := rd.RecordBatch()
			batches++
			if rec.NumRows() > arrowBatchRows || rec.NumCols() != 5 {
				t.Fatalf("%d×%d: a batch of %d rows, %d columns", shape.nq, shape.k, rec.NumRows(), rec.NumCols())
			}
			for r := range int(rec.NumRows()) {
				q, j := n/max(shape.k, 1), n%max(shape.k, 1)
				if got := rec.Column(1).ValueStr(r); got != fmt.Sprint("w", q, j) {
					t.Fatalf("%d×%d: row %d is %s, want w%d%d", shape.nq, shape.k, n, got, q, j)
				}
				n++
			}
		}
		if err := rd.Err(); err != nil {
			t.Fatal(err)
		}
		rd.Release()
		if n != shape.nq*shape.k || batches != max(1, (n+arrowBatchRows-1)/arrowBatchRows) {
			t.Fatalf("%d×%d: %d rows in %d batches", shape.nq, shape.k, n, batches)
		}
	}
}
