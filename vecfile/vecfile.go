package vecfile

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"slices"

	"github.com/parqdb/parqdb/postings"

	"github.com/parqdb/parqdb/internal/errclass"
)

// Name is the fixed name of the vectors file inside the side folder of a
// snapshot's postings table (postings.Layout.Meta; profile §4.2).
const Name = "vectors.f32"

// Location returns the vectors file of the postings table whose side
// folder (postings.Layout.Meta, ending in "/") is meta.
func Location(meta string) string { return meta + Name }

// FooterSize is the length of the footer that ends every vectors file.
const FooterSize = 64

// FormatVersion is the footer's format version.
const FormatVersion = 1

// magic starts the footer.
const magic = "PQDBVEC1"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var (
	// ErrCorrupt means a vectors file is truncated, damaged, or does not
	// belong to the manifest it is read with. It is of the corrupt class
	// (errclass.ErrCorrupt).
	ErrCorrupt = errclass.Corrupt("vectors file: corrupt or foreign")
)

// Error is an error about one vectors file; it names the file.
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string { return e.Path + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

func corrupt(path, format string, args ...any) error {
	return &Error{Path: path, Err: fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)}
}

// Footer is what a vectors file's last FooterSize bytes say.
type Footer struct {
	Dim  int
	Rows int64
	// Manifest is the SHA-256 of the manifest.json bytes of the postings
	// whose order the file follows: it binds the file to exactly those
	// postings (a file of another build or snapshot has another hash).
	Manifest [32]byte
	// DataCRC is the CRC-32C of the Rows·Dim·4 data bytes.
	DataCRC uint32
}

// DataSize is the byte length of the data before the footer.
func (f Footer) DataSize() int64 { return f.Rows * int64(f.Dim) * 4 }

// marshal returns the footer's FooterSize bytes.
func (f Footer) marshal() []byte {
	b := make([]byte, 0, FooterSize)
	b = append(b, magic...)
	b = binary.LittleEndian.AppendUint32(b, FormatVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(f.Dim))
	b = binary.LittleEndian.AppendUint64(b, uint64(f.Rows))
	b = append(b, f.Manifest[:]...)
	b = binary.LittleEndian.AppendUint32(b, f.DataCRC)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// parseFooter checks and decodes a footer read from a file of size bytes.
func parseFooter(path string, b []byte, size int64) (Footer, error) {
	var f Footer
	if len(b) != FooterSize || string(b[:8]) != magic {
		return f, corrupt(path, "no vectors-file footer (magic %q expected in the last %d bytes)", magic, FooterSize)
	}
	if got, want := crc32.Checksum(b[:60], castagnoli), binary.LittleEndian.Uint32(b[60:]); got != want {
		return f, corrupt(path, "footer checksum %08x, footer says %08x", got, want)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != FormatVersion {
		return f, corrupt(path, "format version %d (this release reads %d)", v, FormatVersion)
	}
	dim := binary.LittleEndian.Uint32(b[12:])
	rows := binary.LittleEndian.Uint64(b[16:])
	if dim < 1 || dim > 1<<20 || rows < 1 || rows > math.MaxInt64/(4<<20) {
		return f, corrupt(path, "dimension %d, rows %d out of range", dim, rows)
	}
	f.Dim, f.Rows = int(dim), int64(rows)
	copy(f.Manifest[:], b[24:56])
	f.DataCRC = binary.LittleEndian.Uint32(b[56:])
	if want := f.DataSize() + FooterSize; size != want {
		return f, corrupt(path, "%d bytes, %d rows × dimension %d need %d (truncated or extended)", size, f.Rows, f.Dim, want)
	}
	return f, nil
}

// ManifestHash is the SHA-256 of a manifest.json's bytes, as a footer
// holds it.
func ManifestHash(manifest []byte) [32]byte { return sha256.Sum256(manifest) }

// Writer streams a vectors file: rows of exactly Dim float32 values, in
// postings order, then the footer on Close. It buffers 64 KiB and retains
// no rows. It is used by one goroutine.
type Writer struct {
	w    *bufio.Writer
	crc  hash.Hash32
	f    Footer
	n    int64
	buf  []byte
	done bool
}

// NewWriter starts a vectors file of rows rows of dimension dim on w,
// bound to the manifest whose SHA-256 is manifest (ManifestHash).
func NewWriter(w io.Writer, dim int, rows int64, manifest [32]byte) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), crc: crc32.New(castagnoli), f: Footer{Dim: dim, Rows: rows, Manifest: manifest}}
}

// Write appends len(vecs)/Dim rows (vecs holds whole rows; the caller
// keeps it).
func (w *Writer) Write(vecs []float32) error {
	if w.done {
		return errors.New("vectors file: write after close")
	}
	if len(vecs)%w.f.Dim != 0 {
		return fmt.Errorf("vectors file: %d values is not a whole number of rows of dimension %d", len(vecs), w.f.Dim)
	}
	n := int64(len(vecs) / w.f.Dim)
	if w.n+n > w.f.Rows {
		return fmt.Errorf("vectors file: more than the %d rows announced", w.f.Rows)
	}
	w.n += n
	const per = 4096
	for len(vecs) > 0 {
		c := vecs[:min(per, len(vecs))]
		vecs = vecs[len(c):]
		w.buf = w.buf[:0]
		for _, v := range c {
			w.buf = binary.LittleEndian.AppendUint32(w.buf, math.Float32bits(v))
		}
		w.crc.Write(w.buf)
		if _, err := w.w.Write(w.buf); err != nil {
			return err
		}
	}
	return nil
}

// Close writes the footer and flushes; it fails if fewer rows than
// announced were written. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	if w.n != w.f.Rows {
		return fmt.Errorf("vectors file: %d rows written, %d announced", w.n, w.f.Rows)
	}
	w.f.DataCRC = w.crc.Sum32()
	if _, err := w.w.Write(w.f.marshal()); err != nil {
		return err
	}
	return w.w.Flush()
}

// File is an opened vectors file. Its methods are safe for concurrent
// use if r's ReadAt is.
type File struct {
	Footer
	path string
	r    io.ReaderAt
	size int64
}

// Open reads and checks the footer of the vectors file path (for
// messages), read through r, which is size bytes long: magic, checksum,
// version, and a size that matches its rows and dimension exactly (a
// truncated file fails here). Errors are *Error naming path.
func Open(r io.ReaderAt, size int64, path string) (*File, error) {
	if size < FooterSize {
		return nil, corrupt(path, "%d bytes, shorter than the %d-byte footer", size, FooterSize)
	}
	b := make([]byte, FooterSize)
	if _, err := r.ReadAt(b, size-FooterSize); err != nil && !errors.Is(err, io.EOF) {
		return nil, &Error{Path: path, Err: fmt.Errorf("read footer: %w", err)}
	}
	f, err := parseFooter(path, b, size)
	if err != nil {
		return nil, err
	}
	return &File{Footer: f, path: path, r: r, size: size}, nil
}

// OpenFor is Open, then Check: the vectors file path, read through r of
// size bytes, for postings of dim dimensions, rows rows and manifest hash
// manifest. A file that is damaged or belongs to other postings is an
// *Error wrapping ErrCorrupt; a read error is an *Error wrapping it.
func OpenFor(r io.ReaderAt, size int64, path string, dim int, rows int64, manifest [32]byte) (*File, error) {
	f, err := Open(r, size, path)
	if err != nil {
		return nil, err
	}
	if err := f.Check(dim, rows, manifest); err != nil {
		return nil, err
	}
	return f, nil
}

// Path returns the file's location as given to Open.
func (f *File) Path() string { return f.path }

// Check reports (as an *Error wrapping ErrCorrupt) a file that does not
// belong to the postings it is read with: another dimension, row count or
// manifest.
func (f *File) Check(dim int, rows int64, manifest [32]byte) error {
	if f.Dim != dim || f.Rows != rows {
		return corrupt(f.path, "dimension %d, %d rows; the postings have dimension %d, %d rows", f.Dim, f.Rows, dim, rows)
	}
	if f.Manifest != manifest {
		return corrupt(f.path, "written for another manifest (SHA-256 %x, the postings manifest has %x)", f.Manifest[:8], manifest[:8])
	}
	return nil
}

// Starts returns, for each CID of m, the global position of its list's
// first row in postings order (len NList+1: the last entry is Rows).
func Starts(m *postings.Manifest) []int64 {
	s := make([]int64, m.NList+1)
	for _, rg := range m.RowGroups {
		s[rg.CID+1] += rg.Rows
	}
	for i := 1; i < len(s); i++ {
		s[i] += s[i-1]
	}
	return s
}

// ReadRows reads rows [first, first+len(dst)/Dim) into dst (whole rows):
// one ranged read.
func (f *File) ReadRows(dst []float32, first int64) error {
	n := int64(len(dst) / f.Dim)
	if first < 0 || first+n > f.Rows || len(dst)%f.Dim != 0 {
		return &Error{Path: f.path, Err: fmt.Errorf("rows [%d, %d) out of the file's %d", first, first+n, f.Rows)}
	}
	if n == 0 {
		return nil
	}
	b := make([]byte, len(dst)*4)
	if err := f.readAt(b, first*int64(f.Dim)*4); err != nil {
		return err
	}
	decode(dst, b)
	return nil
}

// ReadData reads len(b) bytes of the data section at off (a ranged read;
// errors name the file). Callers that cache blocks use it.
func (f *File) ReadData(b []byte, off int64) error {
	if off < 0 || off+int64(len(b)) > f.DataSize() {
		return &Error{Path: f.path, Err: fmt.Errorf("bytes [%d, %d) outside the %d data bytes", off, off+int64(len(b)), f.DataSize())}
	}
	return f.readAt(b, off)
}

// Decode converts little-endian float32 bytes b to dst (len(b) = 4·len(dst)).
func Decode(dst []float32, b []byte) { decode(dst, b) }

func (f *File) readAt(b []byte, off int64) error {
	if n, err := f.r.ReadAt(b, off); err != nil && !(errors.Is(err, io.EOF) && n == len(b)) {
		return &Error{Path: f.path, Err: fmt.Errorf("read bytes [%d, %d): %w", off, off+int64(len(b)), err)}
	}
	return nil
}

func decode(dst []float32, b []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[i*4:]))
	}
}

// MaxGap is the largest gap, in bytes, between two requested rows that
// Gather still covers with one read rather than two.
const MaxGap = 4 << 10

// Gather reads the rows at the global positions pos (any order, repeats
// allowed) and calls put(j, row) for each pos[j], row being dst-owned
// scratch valid only during the call. Rows closer than MaxGap are read
// together: one ranged read per run. It returns the number of reads.
func (f *File) Gather(ctx context.Context, pos []int64, put func(j int, row []float32)) (int, error) {
	if len(pos) == 0 {
		return 0, nil
	}
	rb := int64(f.Dim) * 4
	order := make([]int, len(pos))
	for j := range order {
		order[j] = j
		if pos[j] < 0 || pos[j] >= f.Rows {
			return 0, &Error{Path: f.path, Err: fmt.Errorf("row %d out of the file's %d", pos[j], f.Rows)}
		}
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(pos[a], pos[b]) })
	row := make([]float32, f.Dim)
	var buf []byte
	reads := 0
	for i := 0; i < len(order); {
		lo := pos[order[i]]
		hi := lo + 1
		e := i + 1
		for e < len(order) && (pos[order[e]]-hi)*rb <= MaxGap {
			hi = max(hi, pos[order[e]]+1)
			e++
		}
		if err := ctx.Err(); err != nil {
			return reads, err
		}
		n := (hi - lo) * rb
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if err := f.readAt(buf, lo*rb); err != nil {
			return reads, err
		}
		reads++
		for ; i < e; i++ {
			j := order[i]
			o := (pos[j] - lo) * rb
			decode(row, buf[o:o+rb])
			put(j, row)
		}
	}
	return reads, nil
}

// Verify reads the whole data section in chunks and checks its CRC-32C
// against the footer's (readers do not: a ranged read cannot).
func (f *File) Verify(ctx context.Context) error {
	c := crc32.New(castagnoli)
	buf := make([]byte, 1<<20)
	for off := int64(0); off < f.DataSize(); {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(int64(len(buf)), f.DataSize()-off)
		if err := f.readAt(buf[:n], off); err != nil {
			return err
		}
		c.Write(buf[:n])
		off += n
	}
	if got := c.Sum32(); got != f.DataCRC {
		return corrupt(f.path, "data checksum %08x, footer says %08x", got, f.DataCRC)
	}
	return nil
}

// Stream reads a file's rows front to back. It is how a successor
// snapshot's vectors file is derived from its base's without reading the
// source (indexer): the data section is read once, in order, in chunks.
type Stream struct {
	f    *File
	off  int64  // data bytes fetched so far
	buf  []byte // fetched, not yet returned: buf[pos:]
	pos  int
	crc  hash.Hash32
	read int64 // rows returned
}

// Stream returns a reader of f's rows from the first, fetching chunk bytes
// (rounded to whole rows, at least one) per ranged read.
func (f *File) Stream(chunk int) *Stream {
	row := 4 * f.Dim
	chunk = max(row, chunk/row*row)
	return &Stream{f: f, buf: make([]byte, 0, chunk), crc: crc32.New(castagnoli)}
}

// Read fills dst (whole rows) with the next rows. The read that fetches
// the end of the data section checks the data CRC-32C against the footer
// first, so that no row of a damaged file is returned past that point and
// a file whose rows were all read was checked whole.
func (s *Stream) Read(dst []float32) error {
	f := s.f
	if len(dst)%f.Dim != 0 || s.read+int64(len(dst)/f.Dim) > f.Rows {
		return &Error{Path: f.path, Err: fmt.Errorf("read of %d values at row %d: not whole rows within the file's %d", len(dst), s.read, f.Rows)}
	}
	s.read += int64(len(dst) / f.Dim)
	for len(dst) > 0 {
		if s.pos == len(s.buf) {
			n := min(int64(cap(s.buf)), f.DataSize()-s.off)
			s.buf, s.pos = s.buf[:n], 0
			if err := f.readAt(s.buf, s.off); err != nil {
				return err
			}
			s.off += n
			s.crc.Write(s.buf)
			if s.off == f.DataSize() {
				if got := s.crc.Sum32(); got != f.DataCRC {
					return corrupt(f.path, "data checksum %08x, footer says %08x", got, f.DataCRC)
				}
			}
		}
		k := min(len(dst), (len(s.buf)-s.pos)/4)
		decode(dst[:k], s.buf[s.pos:])
		s.pos += 4 * k
		dst = dst[k:]
	}
	return nil
}
