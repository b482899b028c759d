package query

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/vecfile"
)

// TestVecBlocksGather reads random rows (dimension 300: rows straddle
// blocks) through the block cache under a budget that holds a few blocks
// only, and checks every row, the budget, and that repeats hit.
func TestVecBlocksGather(t *testing.T) {
	const dim, rows = 300, 500
	r := rand.New(rand.NewPCG(3, 4))
	vecs := make([]float32, dim*rows)
	for i := range vecs {
		vecs[i] = r.Float32()
	}
	var buf bytes.Buffer
	w := vecfile.NewWriter(&buf, dim, rows, [32]byte{})
	if err := w.Write(vecs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := vecfile.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "v")
	if err != nil {
		t.Fatal(err)
	}
	const limit = 8 * (vecBlockSize + vecBlockOverhead)
	b := membudget.New(limit)
	c := newVecBlocks(b, false)
	row := make([]float32, dim)
	for round := 0; round < 50; round++ {
		pos := make([]int64, 1+r.IntN(20))
		for j := range pos {
			pos[j] = r.Int64N(rows)
			if round%2 == 1 { // the last row: a partial last block
				pos[j] = rows - 1 - int64(j%3)
			}
		}
		err := c.gather(context.Background(), f, pos, func(j int, raw []byte) {
			vecfile.Decode(row, raw)
			for d := range row {
				if row[d] != vecs[pos[j]*dim+int64(d)] {
					t.Fatalf("round %d row %d dim %d: %v, want %v", round, pos[j], d, row[d], vecs[pos[j]*dim+int64(d)])
				}
			}
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if u := b.Used(); u > limit {
			t.Fatalf("round %d: %d bytes charged, budget %d", round, u, limit)
		}
	}
	st := b.Stats()
	if len(st) != 1 || st[0].Hits == 0 || st[0].Evictions == 0 {
		t.Fatalf("stats %+v: want hits and evictions", st)
	}
	c.close()
	if b.Used() != 0 {
		t.Fatalf("%d bytes charged after close", b.Used())
	}
}
