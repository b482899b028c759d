package postings

import (
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// KeyRowsName is the fixed name of the key-rows table inside the
// ivf_postings table folder (profile §9.5): the persisted key → source row
// map, so that a reader joins results to source rows without scanning the
// source's key columns.
const KeyRowsName = "key-rows.parquet"

// keyRowsPerGroup is the row-group size of the key-rows table.
const keyRowsPerGroup = 1 << 20

var keyRowsSchema = parquet.NewSchema("ivf_key_rows", orderedGroup{
	field("key_hash", parquet.Int(64)),
	field("source_row", parquet.Int(64)),
})

var keyRowsLeaves = []leafSpec{
	{path: []string{"key_hash"}, kind: parquet.Int64, check: isSignedInt(64)},
	{path: []string{"source_row"}, kind: parquet.Int64, check: isSignedInt(64)},
}

// KeyRowsWriter writes the key-rows table: one row per source row, the
// 64-bit FNV-1a hash of the row's canonical key encoding (stored as the
// int64 with the same bits) and the row's ordinal across the source files
// in table order. Rows must come in ascending (unsigned hash, ordinal)
// order; Write refuses any other. A KeyRowsWriter is not safe for
// concurrent use.
type KeyRowsWriter struct {
	pw    *parquet.GenericWriter[any]
	rows  int64
	inRG  int
	lastH uint64
	lastO int64
	row   parquet.Row
}

// NewKeyRowsWriter starts a key-rows table on w.
func NewKeyRowsWriter(w io.Writer) *KeyRowsWriter {
	return &KeyRowsWriter{pw: parquet.NewGenericWriter[any](w, writerOptions(keyRowsSchema)...)}
}

// Write appends the rows hashes[i], ords[i].
func (kw *KeyRowsWriter) Write(hashes []uint64, ords []int64) error {
	if len(hashes) != len(ords) {
		return fmt.Errorf("ivf_key_rows: %d hashes for %d ordinals", len(hashes), len(ords))
	}
	for i, h := range hashes {
		o := ords[i]
		if kw.rows > 0 && (h < kw.lastH || (h == kw.lastH && o <= kw.lastO)) {
			return fmt.Errorf("ivf_key_rows: row %d (hash %016x, source row %d) not after (%016x, %d)", kw.rows, h, o, kw.lastH, kw.lastO)
		}
		kw.row = append(kw.row[:0], parquet.Int64Value(int64(h)).Level(0, 0, 0), parquet.Int64Value(o).Level(0, 0, 1))
		if _, err := kw.pw.WriteRows([]parquet.Row{kw.row}); err != nil {
			return fmt.Errorf("ivf_key_rows: write: %w", err)
		}
		kw.rows++
		kw.lastH, kw.lastO = h, o
		if kw.inRG++; kw.inRG == keyRowsPerGroup {
			if err := kw.pw.Flush(); err != nil {
				return fmt.Errorf("ivf_key_rows: flush: %w", err)
			}
			kw.inRG = 0
		}
	}
	return nil
}

// Close finishes the table and returns its row count.
func (kw *KeyRowsWriter) Close() (int64, error) {
	if err := kw.pw.Close(); err != nil {
		return 0, fmt.Errorf("ivf_key_rows: close: %w", err)
	}
	return kw.rows, nil
}

// ReadKeyRows reads a whole key-rows table of size bytes (footer and
// columns checked against the profile) and returns its hashes and
// ordinals in file order. It checks that there are exactly rows rows; the
// order is checked by the caller that builds a lookup from them.
func ReadKeyRows(r io.ReaderAt, size, rows int64) (hashes []uint64, ords []int64, err error) {
	const table = "ivf_key_rows"
	rr := &recordingReader{r: r, size: size}
	f, err := openTable(rr, size, table, keyRowsLeaves)
	if err != nil {
		return nil, nil, err
	}
	if f.NumRows() != rows || rows*16 > size {
		return nil, nil, errorf(ErrCorrupt, table, "%d rows, the manifest says %d", f.NumRows(), rows)
	}
	hashes, ords = make([]uint64, 0, rows), make([]int64, 0, rows)
	err = readRows(f, rr, func(_ int, row parquet.Row) error {
		if len(row) != 2 {
			return errorf(ErrCorrupt, fmt.Sprintf("%s row %d", table, len(hashes)), "%d values, want 2", len(row))
		}
		hashes = append(hashes, uint64(row[0].Int64()))
		ords = append(ords, row[1].Int64())
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if int64(len(hashes)) != rows {
		return nil, nil, errorf(ErrCorrupt, table, "%d rows read, the manifest says %d", len(hashes), rows)
	}
	return hashes, ords, nil
}
