package postings

import (
	"fmt"
	"hash/crc32"
	"io"

	"github.com/parquet-go/parquet-go"
)

// Row is one postings row. Key is an encoded key (Schema.AppendKey). For
// the source encoding Offset and Scale are zero and Code is empty.
type Row struct {
	CID    int32
	Key    []byte
	Offset float32
	Scale  float32
	Code   []byte
}

// Range locates one row group of a postings table: the CID it holds, the
// file (an index into Manifest.Files) and ordinal within that file, the byte
// range [Offset, Offset+Length) covering exactly its column chunks, its row
// count and the CRC-32C (Castagnoli) of those bytes.
type Range struct {
	CID      int32
	File     int32
	RowGroup int32
	Offset   int64
	Length   int64
	Rows     int64
	CRC32C   uint32
}

// FileEntry describes one postings file in a manifest.
type FileEntry struct {
	// Path is the file's warehouse-relative location. BucketWriter leaves
	// it empty: the caller, which named the object, fills it in.
	Path string
	// Size is the file's length in bytes.
	Size int64
	// Bucket is the root bucket whose CID interval holds every CID in the
	// file.
	Bucket int32
	// Rows is the number of rows in the file.
	Rows int64
	// RowGroups is the number of row groups in the file.
	RowGroups int32
	// Ranges are the file's row groups in ordinal order, with File = 0. Set
	// by BucketWriter.Close; nil in a parsed manifest (use Manifest.Ranges).
	Ranges []Range
}

// WriterOptions tune a BucketWriter. The zero value selects the defaults.
type WriterOptions struct {
	// MaxRowsPerRowGroup splits a CID with more rows into several row
	// groups. Default DefaultMaxRowsPerRowGroup.
	MaxRowsPerRowGroup int
	// MaxRowGroups is the most row groups one file may hold. Default and
	// maximum MaxRowGroupsPerFile.
	MaxRowGroups int
}

// Defaults of WriterOptions.
const (
	DefaultMaxRowsPerRowGroup = 1 << 16
	// MaxRowGroupsPerFile is parquet-go's limit on row groups per file.
	MaxRowGroupsPerFile = parquet.MaxRowGroups
)

// BucketWriter writes one postings file of one root bucket. CIDs come in
// non-decreasing order (WriteCID may be called again with the same CID to
// stream a large cluster); every row group holds exactly one CID; no empty
// row group is ever written. A BucketWriter is not safe for concurrent use.
// Memory: one row group is buffered (parquet-go) at a time.
type BucketWriter struct {
	s       Schema
	bucket  int32
	opts    WriterOptions
	codeLen int
	out     *crcWriter
	pw      *parquet.GenericWriter[any]
	ranges  []Range
	rows    int64
	lastCID int32
	closed  bool
	err     error // sticky

	vals []parquet.Value
	prow []parquet.Row
}

// NewBucketWriter starts a postings file for root bucket on w.
func NewBucketWriter(w io.Writer, s Schema, bucket int32, opts WriterOptions) (*BucketWriter, error) {
	ps, err := s.ParquetSchema()
	if err != nil {
		return nil, err
	}
	if bucket < 0 {
		return nil, errorf(ErrSchema, "bucket writer", "bucket %d negative", bucket)
	}
	if opts.MaxRowsPerRowGroup == 0 {
		opts.MaxRowsPerRowGroup = DefaultMaxRowsPerRowGroup
	}
	if opts.MaxRowGroups == 0 {
		opts.MaxRowGroups = MaxRowGroupsPerFile
	}
	if opts.MaxRowsPerRowGroup < 1 || opts.MaxRowGroups < 1 || opts.MaxRowGroups > MaxRowGroupsPerFile {
		return nil, errorf(ErrSchema, "bucket writer options", "max rows per row group %d, max row groups %d", opts.MaxRowsPerRowGroup, opts.MaxRowGroups)
	}
	out := &crcWriter{w: w}
	return &BucketWriter{
		s: s, bucket: bucket, opts: opts, codeLen: s.CodeLen(), out: out,
		pw:      parquet.NewGenericWriter[any](out, writerOptions(ps)...),
		lastCID: -1,
	}, nil
}

// RowGroupsFor returns how many row groups WriteCID uses for n rows.
func (bw *BucketWriter) RowGroupsFor(n int) int {
	return (n + bw.opts.MaxRowsPerRowGroup - 1) / bw.opts.MaxRowsPerRowGroup
}

// WriteCID writes the rows of cid as one or more row groups. Every row must
// carry CID cid, a valid encoded key, and (lvq4, lvq8) finite offset, finite
// non-negative scale, a code of exactly CodeLen bytes whose reconstruction
// is finite and, for lvq4 with odd D, whose unused final nibble is zero.
// cid must not be below the previous call's. An empty rows writes nothing.
// If the file cannot take the row groups WriteCID returns an error wrapping
// ErrFileFull and writes nothing; the writer stays usable (Close it and
// continue in a new file). Other errors are sticky. The writer does not
// retain rows.
func (bw *BucketWriter) WriteCID(cid int32, rows []Row) error {
	if bw.err != nil {
		return bw.err
	}
	if bw.closed {
		return errorf(ErrOrder, "bucket writer", "WriteCID after Close")
	}
	if cid < bw.lastCID || cid < 0 {
		return errorf(ErrOrder, "bucket writer", "cid %d after cid %d", cid, bw.lastCID)
	}
	if len(rows) == 0 {
		return nil
	}
	if need := bw.RowGroupsFor(len(rows)); len(bw.ranges)+need > bw.opts.MaxRowGroups {
		return errorf(ErrFileFull, "bucket writer", "cid %d needs %d row groups, %d of %d used", cid, need, len(bw.ranges), bw.opts.MaxRowGroups)
	}
	for i := range rows {
		if err := bw.checkRow(cid, &rows[i]); err != nil {
			return err
		}
	}
	bw.lastCID = cid
	for len(rows) > 0 {
		n := min(len(rows), bw.opts.MaxRowsPerRowGroup)
		if err := bw.writeGroup(cid, rows[:n]); err != nil {
			bw.err = err
			return err
		}
		rows = rows[n:]
	}
	return nil
}

func (bw *BucketWriter) checkRow(cid int32, r *Row) error {
	where := func() string { return fmt.Sprintf("postings cid %d key %x", cid, r.Key) }
	if r.CID != cid {
		return errorf(ErrOrder, where(), "row of cid %d in WriteCID(%d)", r.CID, cid)
	}
	if err := bw.s.checkKey(r.Key); err != nil {
		return errorf(ErrSchema, where(), "%v", err)
	}
	if !bw.s.HasCodes() {
		if r.Offset != 0 || r.Scale != 0 || len(r.Code) != 0 {
			return errorf(ErrSchema, where(), "offset, scale or code set for encoding source")
		}
		return nil
	}
	if len(r.Code) != bw.codeLen {
		return errorf(ErrSchema, where(), "code of %d bytes, want %d", len(r.Code), bw.codeLen)
	}
	maxCode := 255
	if bw.s.Encoding == EncodingLVQ4 {
		maxCode = 15
		if bw.s.Dim%2 == 1 && r.Code[len(r.Code)-1]>>4 != 0 {
			return errorf(ErrSchema, where(), "lvq4 unused final high nibble not zero")
		}
	}
	if err := checkLVQ(r.Offset, r.Scale, r.Code, maxCode); err != nil {
		return errorf(ErrSchema, where(), "%v", err)
	}
	return nil
}

// writeGroup writes one row group and records its range.
func (bw *BucketWriter) writeGroup(cid int32, rows []Row) error {
	ncol := 1 + len(bw.s.Keys)
	if bw.s.HasCodes() {
		ncol += 3
	}
	bw.ranges = append(bw.ranges, Range{CID: cid, RowGroup: int32(len(bw.ranges)), Rows: int64(len(rows))})
	bw.rows += int64(len(rows))
	const batch = 1024
	for len(rows) > 0 {
		n := min(len(rows), batch)
		bw.vals = bw.vals[:0]
		for i := range rows[:n] {
			r := &rows[i]
			bw.vals = append(bw.vals, parquet.Int32Value(cid).Level(0, 0, 0))
			bw.vals, _ = bw.s.appendKeyValues(bw.vals, r.Key) // checked in WriteCID
			if bw.s.HasCodes() {
				c := len(bw.s.Keys) + 1
				bw.vals = append(bw.vals,
					parquet.FloatValue(r.Offset).Level(0, 0, c),
					parquet.FloatValue(r.Scale).Level(0, 0, c+1),
					parquet.ByteArrayValue(r.Code).Level(0, 0, c+2))
			}
		}
		// Rows slice vals only once it has stopped growing.
		bw.prow = bw.prow[:0]
		for off := 0; off < len(bw.vals); off += ncol {
			bw.prow = append(bw.prow, bw.vals[off:off+ncol:off+ncol])
		}
		if _, err := bw.pw.WriteRows(bw.prow); err != nil {
			return fmt.Errorf("postings cid %d: write rows: %w", cid, err)
		}
		rows = rows[n:]
	}
	last := &bw.ranges[len(bw.ranges)-1]
	bw.out.mark()
	if err := bw.pw.Flush(); err != nil {
		return fmt.Errorf("postings cid %d: flush row group: %w", cid, err)
	}
	last.Offset, last.Length, last.CRC32C = bw.out.span()
	return nil
}

// Close writes the footer and returns the file's entry (Path empty). It
// cross-checks every recorded range against the footer parquet-go wrote.
// Close on a writer with no rows fails: a postings file is never empty.
func (bw *BucketWriter) Close() (FileEntry, error) {
	if bw.err != nil {
		return FileEntry{}, bw.err
	}
	if bw.closed {
		return FileEntry{}, errorf(ErrOrder, "bucket writer", "Close twice")
	}
	bw.closed = true
	if len(bw.ranges) == 0 {
		bw.err = errorf(ErrOrder, "bucket writer", "no rows: a postings file is never empty")
		return FileEntry{}, bw.err
	}
	if err := bw.pw.Close(); err != nil {
		bw.err = fmt.Errorf("postings: close file: %w", err)
		return FileEntry{}, bw.err
	}
	md := bw.pw.File().Metadata()
	if len(md.RowGroups) != len(bw.ranges) {
		bw.err = fmt.Errorf("postings: writer produced %d row groups, recorded %d", len(md.RowGroups), len(bw.ranges))
		return FileEntry{}, bw.err
	}
	for i, rg := range md.RowGroups {
		r := bw.ranges[i]
		pos := r.Offset
		for c := range rg.Columns {
			cm := &rg.Columns[c].MetaData
			if cm.DataPageOffset != pos || cm.DictionaryPageOffset != 0 {
				bw.err = fmt.Errorf("postings: row group %d column %d at %d, expected contiguous chunk at %d", i, c, cm.DataPageOffset, pos)
				return FileEntry{}, bw.err
			}
			pos += cm.TotalCompressedSize
		}
		if pos != r.Offset+r.Length || rg.NumRows != r.Rows {
			bw.err = fmt.Errorf("postings: row group %d spans [%d, %d) with %d rows, recorded [%d, %d) with %d", i, r.Offset, pos, rg.NumRows, r.Offset, r.Offset+r.Length, r.Rows)
			return FileEntry{}, bw.err
		}
	}
	return FileEntry{
		Size: bw.out.off, Bucket: bw.bucket, Rows: bw.rows,
		RowGroups: int32(len(bw.ranges)), Ranges: bw.ranges,
	}, nil
}

// crcWriter counts bytes and checksums the bytes written since mark,
// skipping the file's 4-byte leading magic.
type crcWriter struct {
	w     io.Writer
	off   int64
	start int64
	crc   uint32
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (c *crcWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	q := p[:n]
	if skip := c.start - c.off; skip > 0 {
		q = q[min(int64(len(q)), skip):]
	}
	c.crc = crc32.Update(c.crc, castagnoli, q)
	c.off += int64(n)
	return n, err
}

func (c *crcWriter) mark() {
	c.start = max(c.off, 4)
	c.crc = 0
}

func (c *crcWriter) span() (offset, length int64, crc uint32) {
	return c.start, c.off - c.start, c.crc
}
