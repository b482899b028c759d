package source

import (
	"fmt"
	"math"

	"github.com/RoaringBitmap/roaring/v2"
)

// Row-level deletes (the hook a provider with merge-on-read deletes uses,
// docs/iceberg.md §3.5).
//
// After ApplyDeletes a file's rows are its LIVE rows: File.Rows and
// NumRows count them, RowLoc.Row, Batch.FirstRow and ColumnBatch.FirstRow
// number them (live row r of a file is its r-th row that is not deleted,
// from 0), and no reader — Scan, ScanWith, ScanColumns, ReadRows,
// ReadVectors, BuildKeyIndex, CheckUniqueKeys, CheckSharedKeys — ever
// returns, checks or counts a deleted row. A deleted row is not checked
// against the source contract either (a deleted row with a null vector is
// not an error). Errors that name a row within a file name the row of the
// Parquet file (physical), as a user reading the file would count it,
// except duplicate-key errors, which name live rows.

// ApplyDeletes marks rows of t's files deleted: deleted maps a file key to
// the positions (row numbers within the Parquet file, from 0) of its
// deleted rows. It must be called once, right after the table is opened
// and before any other use; a view made by Select afterwards keeps the
// deletes. A key that is not a file of t, a position outside its file, or
// a file with more than 2^32-1 rows fails with ErrRowLoc naming the file;
// the table is then unchanged.
func (t *Table) ApplyDeletes(deleted map[string]*roaring.Bitmap) error {
	byKey := make(map[string]*tableFile, len(t.files))
	for _, f := range t.files {
		byKey[f.Key] = f
	}
	type change struct {
		f         *tableFile
		del, live *roaring.Bitmap
	}
	var changes []change
	for key, del := range deleted {
		f, ok := byKey[key]
		if !ok {
			return &Error{Source: t.desc, File: key, Row: -1, Rule: ErrRowLoc, Detail: "deletes name a file that is not a data file of the table"}
		}
		if del == nil || del.IsEmpty() {
			continue
		}
		phys := f.physRows()
		if phys > math.MaxUint32 {
			return &Error{Source: t.desc, File: key, Row: -1, Rule: ErrRowLoc,
				Detail: fmt.Sprintf("%d rows: deletes apply to files of at most %d rows", phys, uint32(math.MaxUint32))}
		}
		if m := int64(del.Maximum()); m >= phys {
			return &Error{Source: t.desc, File: key, Row: m, Rule: ErrRowLoc,
				Detail: fmt.Sprintf("a delete names position %d of a file of %d rows", m, phys)}
		}
		live := roaring.New()
		live.AddRange(0, uint64(phys))
		live.AndNot(del)
		live.RunOptimize()
		d := del.Clone()
		d.RunOptimize()
		changes = append(changes, change{f, d, live})
	}
	for _, c := range changes {
		c.f.del, c.f.live = c.del, c.live
		c.f.Rows = int64(c.live.GetCardinality())
	}
	t.rows = 0
	for _, f := range t.files {
		t.rows += f.Rows
	}
	return nil
}

// Deleted returns the number of deleted rows of t's files (0 without
// ApplyDeletes).
func (t *Table) Deleted() int64 {
	var n int64
	for _, f := range t.files {
		n += f.physRows() - f.Rows
	}
	return n
}

// HasDeletes reports whether file (its index in Files order) has deleted
// rows; false for a file outside the table.
func (t *Table) HasDeletes(file int32) bool {
	return file >= 0 && int(file) < len(t.files) && t.files[file].del != nil
}

// physRows is the number of rows of the Parquet file, deleted ones
// included.
func (f *tableFile) physRows() int64 { return f.rgStart[len(f.rgStart)-1] }

// physRow returns the row of the Parquet file of live row r (r < f.Rows).
func (f *tableFile) physRow(r int64) int64 {
	if f.live == nil {
		return r
	}
	p, err := f.live.Select(uint32(r))
	if err != nil {
		return -1
	}
	return int64(p)
}

// liveRow returns the live row number of row p of the Parquet file, which
// must not be deleted.
func (f *tableFile) liveRow(p int64) int64 {
	if f.del == nil {
		return p
	}
	return p - int64(f.del.Rank(uint32(p)))
}

// liveRun returns, for row p of the Parquet file, the end (exclusive,
// at most end) of the run of rows from p that are all deleted (when
// deleted) or all live.
func (f *tableFile) liveRun(p, end int64) (deleted bool, runEnd int64) {
	if f.del == nil {
		return false, end
	}
	if f.del.Contains(uint32(p)) {
		it := f.live.Iterator()
		it.AdvanceIfNeeded(uint32(p))
		if it.HasNext() {
			return true, min(int64(it.PeekNext()), end)
		}
		return true, end
	}
	it := f.del.Iterator()
	it.AdvanceIfNeeded(uint32(p))
	if it.HasNext() {
		return false, min(int64(it.PeekNext()), end)
	}
	return false, end
}

// physLocs maps locs, numbered in live rows, to rows of the Parquet files;
// locs itself when no file has deletes. A location outside the table fails
// with ErrRowLoc.
func (t *Table) physLocs(locs []RowLoc) ([]RowLoc, error) {
	any := false
	for i, loc := range locs {
		if loc.File < 0 || int(loc.File) >= len(t.files) || loc.Row < 0 || loc.Row >= t.files[loc.File].Rows {
			return nil, &Error{Source: t.desc, Row: -1, Rule: ErrRowLoc, Detail: fmt.Sprintf("locs[%d] = {File: %d, Row: %d}", i, loc.File, loc.Row)}
		}
		any = any || t.files[loc.File].live != nil
	}
	if !any {
		return locs, nil
	}
	out := make([]RowLoc, len(locs))
	for i, loc := range locs {
		out[i] = RowLoc{File: loc.File, Row: t.files[loc.File].physRow(loc.Row)}
	}
	return out, nil
}
