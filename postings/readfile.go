package postings

import (
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// ReadFile reads a postings file through its footer (not the manifest),
// checks it against the profile for schema s (columns, types, PLAIN,
// uncompressed, no dictionary, one CID per row group, the row checks of
// BucketWriter.WriteCID) and calls fn for every row in file order with the
// row group's ordinal. The Row and its slices are reused after fn returns.
// It returns the file's row-group ranges as found in the footer (File 0,
// CRC-32C not computed). It is the slow, independent path used by verify
// and tests; queries use DecodeRowGroup.
func ReadFile(r io.ReaderAt, size int64, s Schema, fn func(rowGroup int, row Row) error) ([]Range, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	const table = "ivf_postings"
	rr := &recordingReader{r: r, size: size}
	f, err := openTable(rr, size, table, postingsLeaves(s))
	if err != nil {
		return nil, err
	}
	ranges, err := footerRanges(f)
	if err != nil {
		return nil, err
	}
	check := &BucketWriter{s: s, codeLen: s.CodeLen()}
	var row Row
	nk := len(s.Keys)
	cur := -1
	var groupCID int32
	err = readRows(f, rr, func(g int, pr parquet.Row) error {
		if len(pr) != len(s.Columns()) {
			return errorf(ErrCorrupt, fmt.Sprintf("%s row group %d", table, g), "row of %d values, want %d", len(pr), len(s.Columns()))
		}
		row.CID = pr[0].Int32()
		if g != cur {
			cur, groupCID = g, row.CID
			ranges[g].CID = groupCID
		} else if row.CID != groupCID {
			return errorf(ErrCorrupt, fmt.Sprintf("%s row group %d", table, g), "holds cids %d and %d", groupCID, row.CID)
		}
		key, err := s.AppendKey(row.Key[:0], pr[1:1+nk])
		if err != nil {
			return errorf(ErrCorrupt, fmt.Sprintf("%s row group %d", table, g), "%v", err)
		}
		row.Key = key
		if s.HasCodes() {
			row.Offset, row.Scale = pr[1+nk].Float(), pr[2+nk].Float()
			row.Code = append(row.Code[:0], pr[3+nk].ByteArray()...)
		}
		if err := check.checkRow(row.CID, &row); err != nil {
			return errorf(ErrCorrupt, fmt.Sprintf("%s row group %d", table, g), "%v", err)
		}
		return fn(g, row)
	})
	if err != nil {
		return nil, err
	}
	return ranges, nil
}

// footerRanges returns each row group's byte range from the footer and
// checks the chunks are contiguous, in column order, without dictionary
// pages, and that no row group is empty.
func footerRanges(f *parquet.File) ([]Range, error) {
	md := f.Metadata()
	ranges := make([]Range, len(md.RowGroups))
	for g, rg := range md.RowGroups {
		where := fmt.Sprintf("ivf_postings row group %d", g)
		if rg.NumRows < 1 {
			return nil, errorf(ErrCorrupt, where, "%d rows: empty row group", rg.NumRows)
		}
		start := rg.Columns[0].MetaData.DataPageOffset
		pos := start
		for c := range rg.Columns {
			cm := &rg.Columns[c].MetaData
			if cm.DataPageOffset != pos || cm.TotalCompressedSize < 1 || cm.NumValues != rg.NumRows {
				return nil, errorf(ErrCorrupt, where, "column chunk %d not contiguous with the previous one or holds %d values for %d rows", c, cm.NumValues, rg.NumRows)
			}
			pos += cm.TotalCompressedSize
		}
		if start < 4 || pos > f.Size()-8 {
			return nil, errorf(ErrCorrupt, where, "column chunks [%d, %d) outside the file's data", start, pos)
		}
		if g > 0 && start < ranges[g-1].Offset+ranges[g-1].Length {
			return nil, errorf(ErrCorrupt, where, "overlaps row group %d", g-1)
		}
		ranges[g] = Range{RowGroup: int32(g), Offset: start, Length: pos - start, Rows: rg.NumRows}
	}
	return ranges, nil
}

// VerifyFile checks postings file m.Files[file], of the given size, against
// the manifest and the profile: the footer's row groups equal the
// manifest's ranges (ordinal, byte range, rows, CID), every range's CRC-32C
// matches, every row passes ReadFile's checks, DecodeRowGroup of every range
// agrees with the footer-based read, and every CID lies in one bucket (the
// caller checks the bucket interval with Manifest.CheckRoots).
func VerifyFile(r io.ReaderAt, size int64, m *Manifest, file int) error {
	if file < 0 || file >= len(m.Files) {
		return errorf(ErrManifest, "verify", "file %d out of range", file)
	}
	fe := m.Files[file]
	if size != fe.Size {
		return errorf(ErrCorrupt, fe.Path, "size %d, manifest says %d", size, fe.Size)
	}
	s := m.Schema()
	want := make([]Range, fe.RowGroups)
	for _, rg := range m.RowGroups {
		if int(rg.File) == file {
			want[rg.RowGroup] = rg
		}
	}
	var batch Batch
	var buf []byte
	decoded := -1
	idx := 0
	got, err := ReadFile(r, size, s, func(g int, row Row) error {
		if g >= len(want) {
			return errorf(ErrCorrupt, fe.Path, "row group %d not in the manifest", g)
		}
		if g != decoded {
			rg := want[g]
			buf = append(buf[:0], make([]byte, rg.Length)...)
			if _, err := r.ReadAt(buf, rg.Offset); err != nil {
				return fmt.Errorf("%s: read row group %d: %w", fe.Path, g, err)
			}
			batch.Reset()
			if err := DecodeRowGroup(s, buf, rg, &batch); err != nil {
				return fmt.Errorf("%s: %w", fe.Path, err)
			}
			decoded, idx = g, 0
		}
		if idx >= batch.Len() {
			return errorf(ErrCorrupt, fe.Path, "row group %d: footer read has more rows than the range decode", g)
		}
		d := batch.Row(idx)
		idx++
		if d.CID != row.CID || string(d.Key) != string(row.Key) || d.Offset != row.Offset || d.Scale != row.Scale || string(d.Code) != string(row.Code) {
			return errorf(ErrCorrupt, fe.Path, "row group %d row %d: range decode differs from footer read", g, idx-1)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(got) != len(want) {
		return errorf(ErrCorrupt, fe.Path, "%d row groups, manifest says %d", len(got), len(want))
	}
	for g := range got {
		w := want[g]
		if got[g].CID != w.CID || got[g].Offset != w.Offset || got[g].Length != w.Length || got[g].Rows != w.Rows {
			return errorf(ErrCorrupt, fe.Path, "row group %d: footer says cid %d [%d, +%d) %d rows, manifest cid %d [%d, +%d) %d rows",
				g, got[g].CID, got[g].Offset, got[g].Length, got[g].Rows, w.CID, w.Offset, w.Length, w.Rows)
		}
	}
	return nil
}
