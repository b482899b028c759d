package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// RowLoc locates one source row: a file of the Table (index into Files)
// and a row index within that file.
type RowLoc struct {
	File int32
	Row  int64
}

// KeyColumn holds one key field's values for the rows of a Batch.
type KeyColumn struct {
	Type   KeyType
	Values []KeyValue // len N; Bytes alias memory owned by the Batch
}

// Batch is a run of consecutive rows of one row group of one file. A Batch
// and everything it references is valid only during the callback it is
// passed to; Scan reuses its memory afterwards.
type Batch struct {
	File     int   // index into Table.Files
	FirstRow int64 // row index within the file of the first row
	N        int   // rows
	Dim      int
	// Vectors holds N*Dim canonical values: converted to float32 and, for
	// the cosine metric, normalised.
	Vectors []float32
	Keys    []KeyColumn // one per key field, in key order

	phys   int64 // row of the Parquet file of the first row (FirstRow counts live rows)
	arena  []byte
	chunks [][]byte
}

// Vector returns row i's vector.
func (b *Batch) Vector(i int) []float32 { return b.Vectors[i*b.Dim : (i+1)*b.Dim] }

// Key returns row i's key tuple (a new slice; bytes alias the batch).
func (b *Batch) Key(i int) []KeyValue {
	out := make([]KeyValue, len(b.Keys))
	for k := range b.Keys {
		out[k] = b.Keys[k].Values[i]
	}
	return out
}

// AppendKey appends row i's canonical key encoding (see AppendKey) to dst.
func (b *Batch) AppendKey(dst []byte, i int) []byte {
	for k := range b.Keys {
		dst = appendKeyValue(dst, b.Keys[k].Values[i])
	}
	return dst
}

// Loc returns row i's location.
func (b *Batch) Loc(i int) RowLoc { return RowLoc{File: int32(b.File), Row: b.FirstRow + int64(i)} }

func (b *Batch) keyString(i int) string {
	var types []KeyType
	vals := make([]KeyValue, len(b.Keys))
	for k := range b.Keys {
		types = append(types, b.Keys[k].Type)
		if i < len(b.Keys[k].Values) {
			vals[k] = b.Keys[k].Values[i]
		}
	}
	return FormatKey(types, vals)
}

// copyBytes copies p into the batch arena; earlier copies stay valid.
func (b *Batch) copyBytes(p []byte) []byte {
	if len(b.arena)+len(p) > cap(b.arena) {
		if len(b.arena) > 0 {
			b.chunks = append(b.chunks, b.arena)
		}
		b.arena = make([]byte, 0, max(64<<10, 2*cap(b.arena), len(p)))
	}
	n := len(b.arena)
	b.arena = append(b.arena, p...)
	return b.arena[n:len(b.arena):len(b.arena)]
}

func (b *Batch) reset(l *Layout, file int, first, phys int64, n int) {
	b.File, b.FirstRow, b.phys, b.N, b.Dim = file, first, phys, 0, l.Dim
	if cap(b.Vectors) < n*l.Dim {
		b.Vectors = make([]float32, n*l.Dim)
	}
	b.Vectors = b.Vectors[:n*l.Dim]
	if len(b.Keys) != len(l.Keys) {
		b.Keys = make([]KeyColumn, len(l.Keys))
	}
	for k := range b.Keys {
		b.Keys[k].Type = l.Keys[k]
		b.Keys[k].Values = b.Keys[k].Values[:0]
	}
	b.arena = b.arena[:0]
	b.chunks = b.chunks[:0]
}

// ScanOptions tunes Scan.
type ScanOptions struct {
	// BatchRows is the most rows per Batch; 0 means 1024. A batch never
	// spans row groups.
	BatchRows int
	// Workers is how many row groups are decoded at once; 0 or 1 decodes
	// in the calling goroutine. Batches are delivered in file and row order
	// whatever the value; memory grows with Workers × 2 batches.
	Workers int
}

// DefaultBatchRows is the batch size used when ScanOptions.BatchRows is 0.
const DefaultBatchRows = 1024

// Scan streams every row of t in file order, row group by row group, as
// batches of at most batchRows rows (0 = DefaultBatchRows) to fn, on the
// calling goroutine. It validates every row against the source contract:
// null vector, null element, null key, wrong dimension, NaN, ±Inf after
// conversion to float32, zero norm under cosine. The first violation in
// file and row order stops the scan with an *Error naming the file, the
// row within it, the row's key and the rule; an error returned by fn
// stops it too and is returned as is. Memory is bounded by the pages of
// one row group's needed columns plus the batch.
func (t *Table) Scan(ctx context.Context, l *Layout, batchRows int, fn func(*Batch) error) error {
	return t.ScanWith(ctx, l, ScanOptions{BatchRows: batchRows}, fn)
}

type unit struct{ file, rg int }

// ScanWith is Scan with options.
func (t *Table) ScanWith(ctx context.Context, l *Layout, opt ScanOptions, fn func(*Batch) error) error {
	if err := t.checkLayout(l); err != nil {
		return err
	}
	if opt.BatchRows <= 0 {
		opt.BatchRows = DefaultBatchRows
	}
	var units []unit
	for fi, f := range t.files {
		for rgi := range f.pf.RowGroups() {
			if f.rgStart[rgi+1] > f.rgStart[rgi] {
				units = append(units, unit{fi, rgi})
			}
		}
	}
	if opt.Workers <= 1 || len(units) <= 1 {
		var r rgReader
		b := new(Batch)
		for _, u := range units {
			err := r.run(ctx, t, l, u, opt.BatchRows, func() *Batch { return b }, fn)
			if err != nil {
				return err
			}
		}
		return nil
	}
	return t.scanParallel(ctx, l, units, opt, fn)
}

func (t *Table) checkLayout(l *Layout) error {
	if l == nil || len(l.files) != len(t.files) || l.Dim <= 0 {
		return &Error{Source: t.desc, Row: -1, Rule: ErrBinding, Detail: "layout was not made by Check on this table"}
	}
	return nil
}

// parUnit is one row group in flight in scanParallel.
type parUnit struct {
	out   chan *Batch // filled batches, closed when the unit is done
	free  chan *Batch // batches handed back by the consumer
	err   error       // set before out is closed
	owned int         // batches this unit took from the pool
}

var batchPool = sync.Pool{New: func() any { return new(Batch) }}

func (t *Table) scanParallel(ctx context.Context, l *Layout, units []unit, opt ScanOptions, fn func(*Batch) error) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	order := make(chan *parUnit, opt.Workers)
	sem := make(chan struct{}, opt.Workers)
	wg.Add(1)
	go func() { // dispatcher: starts units in order, at most Workers at once
		defer wg.Done()
		defer close(order)
		for _, u := range units {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			pu := &parUnit{out: make(chan *Batch, 1), free: make(chan *Batch, 2)}
			select {
			case order <- pu:
			case <-ctx.Done():
				<-sem
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				var r rgReader
				get := func() *Batch {
					if pu.owned < 2 {
						pu.owned++
						return batchPool.Get().(*Batch)
					}
					select {
					case b := <-pu.free:
						return b
					case <-ctx.Done():
						return nil
					}
				}
				emit := func(b *Batch) error {
					select {
					case pu.out <- b:
						return nil
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				pu.err = r.run(ctx, t, l, u, opt.BatchRows, get, emit)
				close(pu.out)
			}()
		}
	}()
	for pu := range order {
		for b := range pu.out {
			if err := fn(b); err != nil {
				return err
			}
			pu.free <- b
		}
		if pu.err != nil {
			return pu.err
		}
		for len(pu.free) > 0 {
			batchPool.Put(<-pu.free)
		}
	}
	return ctx.Err()
}

// rgReader decodes one row group into batches.
type rgReader struct {
	// keysOnly reads and checks only the key columns: batches carry no
	// vectors (scanKeys).
	keysOnly bool
	vec      vecCursor
	keys     []keyCursor
	// first violation in the current batch
	errRow  int
	errRule error
	errDet  string
	errFld  string
}

func (r *rgReader) run(ctx context.Context, t *Table, l *Layout, u unit, batchRows int, get func() *Batch, emit func(*Batch) error) error {
	f := t.files[u.file]
	fl := &l.files[u.file]
	rg := f.pf.RowGroups()[u.rg]
	chunks := rg.ColumnChunks()
	if !r.keysOnly {
		r.vec.reset(&fl.vec, chunks[fl.vec.col].Pages())
		defer r.vec.close()
	}
	if len(r.keys) != len(fl.keys) {
		r.keys = make([]keyCursor, len(fl.keys))
	}
	for k, col := range fl.keys {
		r.keys[k].reset(chunks[col].Pages())
	}
	defer func() {
		for k := range r.keys {
			r.keys[k].close()
		}
	}()
	start, end := f.rgStart[u.rg], f.rgStart[u.rg+1]
	for row := start; row < end; {
		if err := ctx.Err(); err != nil {
			return err
		}
		deleted, runEnd := f.liveRun(row, end)
		if deleted {
			// Deleted rows are decoded and dropped, unchecked.
			if err := r.skip(t, l, f, row, runEnd); err != nil {
				return err
			}
			row = runEnd
			continue
		}
		n := int(min(int64(batchRows), runEnd-row))
		b := get()
		if b == nil {
			return ctx.Err()
		}
		b.reset(l, u.file, f.liveRow(row), row, n)
		if err := r.fill(t, l, f, b, n); err != nil {
			return err
		}
		if err := emit(b); err != nil {
			return err
		}
		row += int64(n)
	}
	return nil
}

// skip decodes and drops rows [from, to) of the Parquet file (deleted
// rows): only a corrupt column chunk fails.
func (r *rgReader) skip(t *Table, l *Layout, f *tableFile, from, to int64) error {
	corrupt := func(row int64, field string, err error) error {
		if err == io.EOF {
			err = errors.New("column chunk ends before the row group's row count")
		}
		return &Error{Source: t.desc, File: f.Key, Row: row, Field: field, Rule: ErrCorrupt, Err: err}
	}
	for k := range r.keys {
		for row := from; row < to; row++ {
			if _, err := r.keys[k].next(); err != nil {
				return corrupt(row, l.Keys[k].Name, err)
			}
		}
	}
	if r.keysOnly {
		return nil
	}
	for row := from; row < to; row++ {
		if _, err := r.vec.readRow(nil); err != nil {
			return corrupt(row, l.VectorField, err)
		}
	}
	return nil
}

func (r *rgReader) fail(i int, field string, rule error, detail string) {
	if i < r.errRow {
		r.errRow, r.errFld, r.errRule, r.errDet = i, field, rule, detail
	}
}

// fill decodes n rows into b, validating them.
func (r *rgReader) fill(t *Table, l *Layout, f *tableFile, b *Batch, n int) error {
	r.errRow = n
	corrupt := func(i int, field string, err error) error {
		if err == io.EOF {
			err = errors.New("column chunk ends before the row group's row count")
		}
		return &Error{Source: t.desc, File: f.Key, Row: b.phys + int64(i), Field: field, Rule: ErrCorrupt, Err: err}
	}
	for k := range r.keys {
		kt := l.Keys[k]
		col := &b.Keys[k]
		for i := 0; i < n; i++ {
			v, err := r.keys[k].next()
			if err != nil {
				return corrupt(i, kt.Name, err)
			}
			if v.IsNull() {
				r.fail(i, kt.Name, ErrNullKey, "")
				break
			}
			kv, err := KeyValueOf(kt, v)
			if err != nil {
				return corrupt(i, kt.Name, err)
			}
			if kv.Bytes != nil {
				kv.Bytes = b.copyBytes(kv.Bytes)
			}
			col.Values = append(col.Values, kv)
		}
	}
	D := l.Dim
	for i := 0; i < n && i < r.errRow && !r.keysOnly; i++ {
		dst := b.Vectors[i*D : (i+1)*D]
		rs, err := r.vec.readRow(dst)
		if err != nil {
			return corrupt(i, l.VectorField, err)
		}
		switch {
		case rs.null:
			r.fail(i, l.VectorField, ErrNullVector, "")
		case rs.count != D:
			r.fail(i, l.VectorField, ErrDimension, fmt.Sprintf("%d elements, want %d", rs.count, D))
		case rs.nullElem >= 0:
			r.fail(i, l.VectorField, ErrNullElement, fmt.Sprintf("element %d", rs.nullElem))
		default:
			if det, rule := checkVector(dst, l.cosine); rule != nil {
				r.fail(i, l.VectorField, rule, det)
			}
		}
	}
	if r.errRow < n {
		return &Error{Source: t.desc, File: f.Key, Row: b.phys + int64(r.errRow), Key: b.keyString(r.errRow),
			Field: r.errFld, Rule: r.errRule, Detail: r.errDet}
	}
	b.N = n
	return nil
}
