package filter

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// benchRow is the shape of bench/filterdata's filter columns.
type benchRow struct {
	ID    int64 `parquet:"id"`
	Label int32 `parquet:"label"`
	U     int32 `parquet:"u"`
}

var benchFile = sync.OnceValues(func() (*parquet.File, error) {
	r := rand.New(rand.NewPCG(2026, 12))
	rows := make([]benchRow, 1_000_000)
	for i := range rows {
		rows[i] = benchRow{ID: int64(i), Label: int32(r.IntN(10)), U: int32(r.IntN(1000))}
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(8192)); err != nil {
		return nil, err
	}
	return parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
})

var benchPredicates = []string{"u < 100", "u < 500 AND label IN (1, 2, 3)", "id BETWEEN 100000 AND 150000"}

func benchProgram(b *testing.B, text string) (*parquet.File, *Program) {
	f, err := benchFile()
	if err != nil {
		b.Fatal(err)
	}
	pred, err := Parse(text)
	if err != nil {
		b.Fatal(err)
	}
	prog, err := pred.Check(f.Schema())
	if err != nil {
		b.Fatal(err)
	}
	return f, prog
}

// reportCPU starts measuring the process's CPU time; the returned function
// reports it per operation as cpu-ns/op, which a loaded machine inflates
// far less than wall-clock ns/op (compare them with benchstat -filter
// '.unit:cpu-ns/op').
func reportCPU(b *testing.B) func() {
	start := processCPU()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// BenchmarkMatch is the bitmap build's work on 1M rows: every row group
// through MatchRowGroup (typed decode, vectorised evaluation, page index).
func BenchmarkMatch(b *testing.B) {
	for _, text := range benchPredicates {
		b.Run(text, func(b *testing.B) {
			f, prog := benchProgram(b, text)
			s := prog.NewScratch()
			defer reportCPU(b)()
			for b.Loop() {
				n := 0
				for _, rg := range f.RowGroups() {
					m, err := prog.MatchRowGroup(context.Background(), s, chunksOf(b, f, rg, prog), int(rg.NumRows()))
					if err != nil {
						b.Fatal(err)
					}
					n += len(m.Rows)
				}
				if n == 0 {
					b.Fatal("no row matches")
				}
			}
		})
	}
}

// BenchmarkDecode is the plain typed scan of the same columns (every
// page decoded, nothing evaluated), what the bitmap build must not exceed.
func BenchmarkDecode(b *testing.B) {
	for _, text := range benchPredicates {
		b.Run(text, func(b *testing.B) {
			f, prog := benchProgram(b, text)
			s := prog.NewScratch()
			defer reportCPU(b)()
			for b.Loop() {
				for _, rg := range f.RowGroups() {
					if _, err := prog.DecodeRowGroup(context.Background(), s, chunksOf(b, f, rg, prog), int(rg.NumRows())); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkBoxed is the previous build: boxed parquet.Values per column,
// evaluated a row at a time with EvalColumns.
func BenchmarkBoxed(b *testing.B) {
	for _, text := range benchPredicates {
		b.Run(text, func(b *testing.B) {
			f, prog := benchProgram(b, text)
			buf := make([]parquet.Value, 1024)
			for b.Loop() {
				n := 0
				for _, rg := range f.RowGroups() {
					cols := make([][]parquet.Value, len(prog.Columns()))
					for j, cc := range chunksOf(b, f, rg, prog) {
						pages := cc.Pages()
						for {
							p, err := pages.ReadPage()
							if errors.Is(err, io.EOF) {
								break
							}
							if err != nil {
								b.Fatal(err)
							}
							vr := p.Values()
							for {
								k, err := vr.ReadValues(buf)
								for _, v := range buf[:k] {
									cols[j] = append(cols[j], v.Clone())
								}
								if err != nil {
									break
								}
							}
							parquet.Release(p)
						}
						pages.Close()
					}
					for i := range int(rg.NumRows()) {
						if prog.EvalColumns(cols, i) {
							n++
						}
					}
				}
				if n == 0 {
					b.Fatal("no row matches")
				}
			}
		})
	}
}
