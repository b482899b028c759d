package source

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"golang.org/x/sync/errgroup"
)

// ChunkStats are the footer statistics of one column chunk.
type ChunkStats struct {
	Min, Max  parquet.Value // smallest and largest non-null values, when HasMinMax
	HasMinMax bool
	// Nulls counts the chunk's null values when HasNulls. It is known for
	// a required column (0) or when the footer reports a positive count;
	// a zero count of an optional column is treated as unknown, since
	// writers that omit the field are read as 0.
	Nulls    int64
	HasNulls bool
	Rows     int64 // rows in the row group
}

// ColumnBatch is the values of the scanned columns in one row group (in
// a file with deleted rows, one run of live rows of a row group).
type ColumnBatch struct {
	File     int               // file index in Files order
	RowGroup int               // row group within the file
	FirstRow int64             // row (within the file) of the first value
	N        int               // rows
	Values   [][]parquet.Value // per column, N values (nulls as null values); byte arrays are owned by the batch
}

// scanColumnsWorkers bounds the row groups read at once by ScanColumns.
const scanColumnsWorkers = 4

// ScanColumns reads only the named top-level scalar columns of the table.
// For each row group it first calls keep with the columns' footer
// statistics (in columns order; they cover deleted rows too); when keep
// returns false the row group is skipped without reading its pages. fn
// receives every kept row group (split into runs of live rows when the
// file has deleted rows, which are never delivered); it
// may be called concurrently from several goroutines, in any order. A file
// lacking a column fails with ErrMissingField, a list or group column with
// ErrFieldType, both naming the file and the column.
func (t *Table) ScanColumns(ctx context.Context, columns []string, keep func(file, rg int, st []ChunkStats) bool, fn func(*ColumnBatch) error) error {
	return t.ScanColumnChunks(ctx, columns, keep, func(c *ColumnChunks) error {
		b := &ColumnBatch{File: c.File, RowGroup: c.RowGroup, FirstRow: c.FirstRow, N: c.N, Values: make([][]parquet.Value, len(columns))}
		for j, cc := range c.Chunks {
			vals, err := readChunkValues(cc, c.N)
			if err != nil {
				f := t.files[c.File]
				return &Error{Source: t.desc, File: f.Key, Row: -1, Field: columns[j], Rule: ErrCorrupt,
					Detail: fmt.Sprintf("row group %d", c.RowGroup), Err: err}
			}
			b.Values[j] = vals
		}
		f := c.f
		if f.del == nil {
			return fn(b)
		}
		// One batch per run of live rows: deleted rows are never
		// delivered, and FirstRow counts live rows.
		all := b.Values
		for p, end := f.rgStart[c.RowGroup], f.rgStart[c.RowGroup+1]; p < end; {
			deleted, runEnd := f.liveRun(p, end)
			if !deleted {
				lo, hi := p-f.rgStart[c.RowGroup], runEnd-f.rgStart[c.RowGroup]
				rb := &ColumnBatch{File: c.File, RowGroup: c.RowGroup, FirstRow: f.liveRow(p), N: int(hi - lo), Values: make([][]parquet.Value, len(all))}
				for j := range all {
					rb.Values[j] = all[j][lo:hi:hi]
				}
				if err := fn(rb); err != nil {
					return err
				}
			}
			p = runEnd
		}
		return nil
	})
}

// ColumnChunks are the column chunks of the scanned columns in one row
// group (deleted rows included: map positions with LiveRows), for callers that decode pages themselves (typed, or skipping
// pages by their column and offset indexes, which the chunks read on
// demand).
type ColumnChunks struct {
	File     int                   // file index in Files order
	FileKey  string                // object key of the file, for errors
	RowGroup int                   // row group within the file
	FirstRow int64                 // row (within the file) of the row group's first row
	N        int                   // rows
	Chunks   []parquet.ColumnChunk // per column, in columns order

	f *tableFile
}

// LiveRows maps rows of the row group (positions from 0, as its pages
// count them, deleted rows included) to live rows of the file, the
// numbering every other reader uses (see ApplyDeletes): deleted rows are
// dropped and the rest renumbered, in place; the result is a prefix of
// rows. Without deletes it adds FirstRow.
func (c *ColumnChunks) LiveRows(rows []uint32) []uint32 {
	base := uint32(c.FirstRow)
	if c.f == nil || c.f.del == nil {
		for i := range rows {
			rows[i] += base
		}
		return rows
	}
	out := rows[:0]
	for _, r := range rows {
		p := base + r
		if c.f.del.Contains(p) {
			continue
		}
		out = append(out, p-uint32(c.f.del.Rank(p)))
	}
	return out
}

// ScanColumnChunks is ScanColumns without decoding: fn receives the kept
// row groups' column chunks, concurrently from several goroutines, in any
// order. An error of fn other than a context error is returned wrapped in
// an *Error naming the file and row group (ErrCorrupt), and a decoder
// panic inside fn is returned as such an error.
func (t *Table) ScanColumnChunks(ctx context.Context, columns []string, keep func(file, rg int, st []ChunkStats) bool, fn func(*ColumnChunks) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(scanColumnsWorkers)
	for fi, f := range t.files {
		leaves := make([]int, len(columns))
		for j, name := range columns {
			leaf, ok := f.pf.Schema().Lookup(f.colName(name))
			if !ok {
				return &Error{Source: t.desc, File: f.Key, Row: -1, Field: name, Rule: ErrMissingField,
					Detail: "the filter reads this column; every source file must have it"}
			}
			if leaf.MaxRepetitionLevel > 0 || len(leaf.Path) != 1 {
				return &Error{Source: t.desc, File: f.Key, Row: -1, Field: name, Rule: ErrFieldType,
					Detail: "filters read top-level scalar columns only"}
			}
			leaves[j] = leaf.ColumnIndex
		}
		md := f.pf.Metadata()
		for ri, rg := range f.pf.RowGroups() {
			if err := gctx.Err(); err != nil {
				break
			}
			rows := f.rgStart[ri+1] - f.rgStart[ri]
			st := make([]ChunkStats, len(columns))
			for j, leaf := range leaves {
				st[j] = chunkStats(f.pf.Schema(), f.colName(columns[j]), md.RowGroups[ri].Columns[leaf].MetaData.Statistics, rows)
			}
			if keep != nil && !keep(fi, ri, st) {
				continue
			}
			g.Go(func() error {
				c := &ColumnChunks{File: fi, FileKey: f.Key, RowGroup: ri, FirstRow: f.rgStart[ri], N: int(rows), Chunks: make([]parquet.ColumnChunk, len(columns)), f: f}
				all := rg.ColumnChunks()
				for j, leaf := range leaves {
					c.Chunks[j] = all[leaf]
				}
				err := safely(func() error { return fn(c) })
				if err == nil || gctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
					return err
				}
				var se *Error
				if errors.As(err, &se) {
					return err
				}
				return &Error{Source: t.desc, File: f.Key, Row: -1, Rule: ErrCorrupt,
					Detail: fmt.Sprintf("row group %d", ri), Err: err}
			})
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// chunkStats decodes a column chunk's footer statistics (min_value and
// max_value only: the deprecated min and max may use the wrong order).
func chunkStats(schema *parquet.Schema, name string, s format.Statistics, rows int64) (cs ChunkStats) {
	cs.Rows = rows
	leaf, _ := schema.Lookup(name)
	if leaf.Node == nil {
		return cs
	}
	if !leaf.Node.Optional() {
		cs.HasNulls = true
	} else if s.NullCount > 0 {
		cs.Nulls, cs.HasNulls = s.NullCount, true
	}
	kind := leaf.Node.Type().Kind()
	if s.MinValue == nil || s.MaxValue == nil {
		return cs
	}
	if kind == parquet.ByteArray && len(s.MaxValue) == 0 {
		return cs // an absent field may read as empty: do not trust it
	}
	_ = safely(func() error {
		cs.Min, cs.Max = kind.Value(s.MinValue), kind.Value(s.MaxValue)
		cs.HasMinMax = true
		return nil
	})
	return cs
}

// readChunkValues reads the n values of a top-level scalar column chunk.
func readChunkValues(cc parquet.ColumnChunk, n int) (out []parquet.Value, err error) {
	err = safely(func() error {
		pages := cc.Pages()
		defer pages.Close()
		out = make([]parquet.Value, 0, n)
		buf := make([]parquet.Value, 1024)
		for {
			p, err := pages.ReadPage()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			vr := p.Values()
			for {
				k, err := vr.ReadValues(buf)
				for _, v := range buf[:k] {
					out = append(out, v.Clone())
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
				if k == 0 {
					return fmt.Errorf("page reader made no progress")
				}
			}
			parquet.Release(p)
		}
		if len(out) != n {
			return fmt.Errorf("%d values for %d rows", len(out), n)
		}
		return nil
	})
	return out, err
}
