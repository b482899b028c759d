package postings

import (
	"encoding/binary"
	"fmt"
	"github.com/parqdb/parqdb/internal/keyenc"
	"hash/crc32"
	"math"
)

// Batch holds decoded postings rows column by column. DecodeRowGroup
// appends to it, so one Batch can gather several row groups; Reset empties
// it and keeps its memory. A Batch is not safe for concurrent use.
type Batch struct {
	// CIDs holds each row's CID.
	CIDs []int32
	// Keys holds the encoded keys back to back; row i's key is
	// Keys[KeyEnds[i-1]:KeyEnds[i]] (KeyEnds[-1] taken as 0); use Key(i).
	Keys    []byte
	KeyEnds []int
	// Offsets and Scales hold the LVQ offset and scale per row (empty for
	// the source encoding).
	Offsets []float32
	Scales  []float32
	// Codes holds the codes back to back, CodeLen bytes per row.
	Codes   []byte
	CodeLen int

	colKeys [][]byte // per key column scratch (K > 1)
	colEnds [][]int
}

// Len returns the number of rows.
func (b *Batch) Len() int { return len(b.CIDs) }

// Key returns row i's encoded key, aliasing the batch.
func (b *Batch) Key(i int) []byte {
	start := 0
	if i > 0 {
		start = b.KeyEnds[i-1]
	}
	return b.Keys[start:b.KeyEnds[i]:b.KeyEnds[i]]
}

// Code returns row i's code, aliasing the batch.
func (b *Batch) Code(i int) []byte {
	return b.Codes[i*b.CodeLen : (i+1)*b.CodeLen : (i+1)*b.CodeLen]
}

// Row returns row i; its slices alias the batch.
func (b *Batch) Row(i int) Row {
	r := Row{CID: b.CIDs[i], Key: b.Key(i)}
	if b.CodeLen > 0 {
		r.Offset, r.Scale, r.Code = b.Offsets[i], b.Scales[i], b.Code(i)
	}
	return r
}

// Reset empties the batch, keeping its memory.
func (b *Batch) Reset() {
	b.CIDs, b.Keys, b.KeyEnds = b.CIDs[:0], b.Keys[:0], b.KeyEnds[:0]
	b.Offsets, b.Scales, b.Codes = b.Offsets[:0], b.Scales[:0], b.Codes[:0]
}

// truncate restores the batch to n rows after a failed decode.
func (b *Batch) truncate(n, keys int) {
	b.CIDs = b.CIDs[:min(n, len(b.CIDs))]
	b.KeyEnds = b.KeyEnds[:min(n, len(b.KeyEnds))]
	b.Keys = b.Keys[:keys]
	b.Offsets = b.Offsets[:min(n, len(b.Offsets))]
	b.Scales = b.Scales[:min(n, len(b.Scales))]
	b.Codes = b.Codes[:min(n*b.CodeLen, len(b.Codes))]
}

// DecodeRowGroup decodes the row group rg (from Manifest.Ranges) from data,
// exactly the rg.Length bytes fetched at rg.Offset of its file, and appends
// its rows to dst. It reads no footer: it checks the CRC-32C, then parses
// each column chunk's page headers in schema order. It enforces the
// profile: only DATA_PAGE or DATA_PAGE_V2 pages, PLAIN, uncompressed, no
// nulls or levels, every cid equal to rg.CID, code length CodeLen, offset
// and scale finite, scale non-negative, exactly rg.Rows values per column
// and no byte left over. On error dst is left as it was. It never panics
// and allocates only to grow dst. dst.CodeLen must be 0 (empty batch) or
// s.CodeLen().
func DecodeRowGroup(s Schema, data []byte, rg Range, dst *Batch) error {
	where := func() string {
		return fmt.Sprintf("postings cid %d file %d row group %d", rg.CID, rg.File, rg.RowGroup)
	}
	if err := s.Validate(); err != nil {
		return err
	}
	if int64(len(data)) != rg.Length {
		return errorf(ErrCorrupt, where(), "%d bytes, range has %d", len(data), rg.Length)
	}
	if rg.Rows < 1 || rg.Rows > int64(len(data))/s.minRowBytes() {
		return errorf(ErrCorrupt, where(), "%d rows cannot fit in %d bytes", rg.Rows, len(data))
	}
	if got := crc32.Checksum(data, castagnoli); got != rg.CRC32C {
		return errorf(ErrCorrupt, where(), "CRC-32C %08x, manifest says %08x", got, rg.CRC32C)
	}
	codeLen := s.CodeLen()
	if dst.Len() > 0 && dst.CodeLen != codeLen {
		return errorf(ErrSchema, where(), "batch holds codes of %d bytes, schema %d", dst.CodeLen, codeLen)
	}
	dst.CodeLen = codeLen
	n0, k0 := dst.Len(), len(dst.Keys)
	d := decoder{s: s, data: data, rows: int(rg.Rows), cid: rg.CID, dst: dst}
	if err := d.decode(); err != nil {
		dst.truncate(n0, k0)
		return errorf(ErrCorrupt, where(), "%v", err)
	}
	return nil
}

type decoder struct {
	s    Schema
	data []byte
	pos  int
	rows int
	cid  int32
	dst  *Batch
}

// column value kinds
const (
	colCID = iota
	colKey
	colOffset
	colScale
	colCode
)

func (d *decoder) decode() error {
	if err := d.column("cid", colCID, KeyType{}); err != nil {
		return err
	}
	if len(d.s.Keys) == 1 {
		if err := d.column(KeyColumn(0), colKey, d.s.Keys[0]); err != nil {
			return err
		}
	} else {
		if err := d.multiKey(); err != nil {
			return err
		}
	}
	if d.s.HasCodes() {
		for _, c := range []struct {
			name string
			kind int
		}{{"offset", colOffset}, {"scale", colScale}, {"code", colCode}} {
			if err := d.column(c.name, c.kind, KeyType{}); err != nil {
				return err
			}
		}
	}
	if d.pos != len(d.data) {
		return fmt.Errorf("%d bytes after the last column chunk", len(d.data)-d.pos)
	}
	return nil
}

// multiKey decodes K > 1 key columns into scratch, then interleaves them.
func (d *decoder) multiKey() error {
	b := d.dst
	k := len(d.s.Keys)
	for len(b.colKeys) < k {
		b.colKeys = append(b.colKeys, nil)
		b.colEnds = append(b.colEnds, nil)
	}
	keys, ends := b.Keys, b.KeyEnds
	for i, kt := range d.s.Keys {
		b.Keys, b.KeyEnds = b.colKeys[i][:0], b.colEnds[i][:0]
		err := d.column(KeyColumn(i), colKey, kt)
		b.colKeys[i], b.colEnds[i] = b.Keys, b.KeyEnds
		if err != nil {
			b.Keys, b.KeyEnds = keys, ends
			return err
		}
	}
	b.Keys, b.KeyEnds = keys, ends
	starts := make([]int, k)
	for r := range d.rows {
		for i := range k {
			end := b.colEnds[i][r]
			b.Keys = append(b.Keys, b.colKeys[i][starts[i]:end]...)
			starts[i] = end
		}
		b.KeyEnds = append(b.KeyEnds, len(b.Keys))
	}
	return nil
}

// column decodes one column chunk: pages until rows values are read.
func (d *decoder) column(name string, kind int, kt KeyType) error {
	done := 0
	for done < d.rows {
		h, hl, err := readPageHeader(d.data[d.pos:])
		if err != nil {
			return fmt.Errorf("column %s page header at %d: %w", name, d.pos, err)
		}
		switch {
		case h.typ == 0 && h.hasV1 && !h.hasV2:
		case h.typ == 3 && h.hasV2 && !h.hasV1:
			if h.numNulls != 0 || h.defLen != 0 || h.repLen != 0 || h.numRows != h.numValues {
				return fmt.Errorf("column %s: page with nulls or levels", name)
			}
		default:
			return fmt.Errorf("column %s: page type %d not a plain data page", name, h.typ)
		}
		if h.encoding != 0 {
			return fmt.Errorf("column %s: encoding %d, want PLAIN", name, h.encoding)
		}
		if h.compressed != h.uncompressed || h.compressed < 0 || int(h.compressed) > len(d.data)-d.pos-hl {
			return fmt.Errorf("column %s: page of %d/%d bytes at %d exceeds the range or is compressed", name, h.compressed, h.uncompressed, d.pos)
		}
		n := int(h.numValues)
		if n < 1 || n > d.rows-done {
			return fmt.Errorf("column %s: page of %d values, %d expected", name, n, d.rows-done)
		}
		body := d.data[d.pos+hl : d.pos+hl+int(h.compressed)]
		if err := d.values(kind, kt, body, n); err != nil {
			return fmt.Errorf("column %s page at %d: %w", name, d.pos, err)
		}
		d.pos += hl + int(h.compressed)
		done += n
	}
	return nil
}

// values decodes n PLAIN values from body, which they must fill exactly.
func (d *decoder) values(kind int, kt KeyType, body []byte, n int) error {
	b := d.dst
	fixed := func(size int) error {
		if len(body) != n*size {
			return fmt.Errorf("%d bytes for %d values of %d bytes", len(body), n, size)
		}
		return nil
	}
	switch kind {
	case colCID:
		if err := fixed(4); err != nil {
			return err
		}
		for i := range n {
			if v := int32(binary.LittleEndian.Uint32(body[4*i:])); v != d.cid {
				return fmt.Errorf("row with cid %d", v)
			}
		}
		for range n {
			b.CIDs = append(b.CIDs, d.cid)
		}
	case colOffset, colScale:
		if err := fixed(4); err != nil {
			return err
		}
		for i := range n {
			v := math.Float32frombits(binary.LittleEndian.Uint32(body[4*i:]))
			if !finite(v) || (kind == colScale && v < 0) {
				return fmt.Errorf("value %v not finite (or negative scale)", v)
			}
			if kind == colOffset {
				b.Offsets = append(b.Offsets, v)
			} else {
				b.Scales = append(b.Scales, v)
			}
		}
	case colCode:
		cl := b.CodeLen
		if len(body) != n*(4+cl) {
			return fmt.Errorf("%d bytes for %d codes of %d bytes", len(body), n, cl)
		}
		b.Codes = growBytes(b.Codes, n*cl)
		for i := range n {
			rec := body[i*(4+cl):]
			if int(binary.LittleEndian.Uint32(rec)) != cl {
				return fmt.Errorf("code of %d bytes, want %d", binary.LittleEndian.Uint32(rec), cl)
			}
			b.Codes = append(b.Codes, rec[4:4+cl]...)
		}
	case colKey:
		return d.keyValues(kt, body, n)
	}
	return nil
}

func growBytes(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+max(n, cap(b)))
		copy(nb, b)
		return nb
	}
	return b
}

// keyValues appends n encoded key fields of type kt to dst.Keys, one
// KeyEnds entry per value.
func (d *decoder) keyValues(kt KeyType, body []byte, n int) error {
	b := d.dst
	switch kt.Kind {
	case KindBool:
		if len(body) != (n+7)/8 {
			return fmt.Errorf("%d bytes for %d booleans", len(body), n)
		}
		for i := range n {
			b.Keys = append(b.Keys, body[i/8]>>(i%8)&1)
			b.KeyEnds = append(b.KeyEnds, len(b.Keys))
		}
	case KindInt32, KindDate:
		if len(body) != 4*n {
			return fmt.Errorf("%d bytes for %d int32 values", len(body), n)
		}
		for i := range n {
			b.Keys = keyenc.AppendInt32(b.Keys, int32(binary.LittleEndian.Uint32(body[4*i:])))
			b.KeyEnds = append(b.KeyEnds, len(b.Keys))
		}
	case KindInt64:
		if len(body) != 8*n {
			return fmt.Errorf("%d bytes for %d int64 values", len(body), n)
		}
		for i := range n {
			b.Keys = keyenc.AppendInt64(b.Keys, int64(binary.LittleEndian.Uint64(body[8*i:])))
			b.KeyEnds = append(b.KeyEnds, len(b.Keys))
		}
	case KindFixed:
		if len(body) != kt.FixedLen*n {
			return fmt.Errorf("%d bytes for %d values of %d bytes", len(body), n, kt.FixedLen)
		}
		for i := range n {
			b.Keys = append(b.Keys, body[i*kt.FixedLen:(i+1)*kt.FixedLen]...)
			b.KeyEnds = append(b.KeyEnds, len(b.Keys))
		}
	case KindBinary, KindString:
		p := 0
		for range n {
			if len(body)-p < 4 {
				return fmt.Errorf("truncated byte array")
			}
			l := int(binary.LittleEndian.Uint32(body[p:]))
			p += 4
			if l > len(body)-p {
				return fmt.Errorf("byte array of %d bytes exceeds the page", l)
			}
			b.Keys = keyenc.AppendBytes(b.Keys, body[p:p+l])
			b.KeyEnds = append(b.KeyEnds, len(b.Keys))
			p += l
		}
		if p != len(body) {
			return fmt.Errorf("%d bytes after %d byte arrays", len(body)-p, n)
		}
	}
	return nil
}
