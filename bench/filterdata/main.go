// Command filterdata adds filter columns to a benchmark source for the
// filtered-search benchmark (docs/benchmarks.md, "Filtered search"):
//
//	filterdata IN.parquet OUT.parquet
//
// IN has columns id (int64), label (int32) and vec (list<float>), as
// bench/mkdata writes them; OUT has the same columns plus u, an int32
// drawn uniformly from [0, 1000) with a fixed seed, so that `u < 500`,
// `u < 100`, `u < 10` and `u < 1` select 50 %, 10 %, 1 % and 0.1 % of the
// rows. It also writes OUT.u.i32, the u values as little-endian int32 in
// row order, for bench/faiss_filter.py.
package main

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/parquet-go/parquet-go"
)

type inRow struct {
	ID    int64     `parquet:"id"`
	Label int32     `parquet:"label"`
	Vec   []float32 `parquet:"vec,list"`
}

type outRow struct {
	ID    int64     `parquet:"id"`
	Label int32     `parquet:"label"`
	U     int32     `parquet:"u"`
	Vec   []float32 `parquet:"vec,list"`
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "filterdata:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: filterdata IN.parquet OUT.parquet")
	}
	rows, err := parquet.ReadFile[inRow](args[0])
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	r := rand.New(rand.NewPCG(2026, 12))
	out := make([]outRow, len(rows))
	us := make([]byte, 0, 4*len(rows))
	for i, x := range rows {
		out[i] = outRow{ID: x.ID, Label: x.Label, U: int32(r.IntN(1000)), Vec: x.Vec}
		us = binary.LittleEndian.AppendUint32(us, uint32(out[i].U))
	}
	if err := os.WriteFile(args[1]+".u.i32", us, 0o644); err != nil {
		return err
	}
	f, err := os.Create(args[1])
	if err != nil {
		return err
	}
	defer f.Close()
	if err := parquet.Write(f, out, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(8192)); err != nil {
		return fmt.Errorf("%s: %w", args[1], err)
	}
	return f.Close()
}
