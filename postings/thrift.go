package postings

import "errors"

// A minimal reader of Thrift compact-protocol page headers (parquet.thrift
// PageHeader), enough for DecodeRowGroup: it reads the fields the profile
// needs and skips everything else. It never panics and never allocates.

var errThrift = errors.New("malformed page header")

type pageHeader struct {
	typ          int32 // PageType: 0 DATA_PAGE, 1 INDEX_PAGE, 2 DICTIONARY_PAGE, 3 DATA_PAGE_V2
	uncompressed int32
	compressed   int32
	hasV1, hasV2 bool
	numValues    int32
	encoding     int32
	numNulls     int32
	numRows      int32
	defLen       int32
	repLen       int32
	seen         uint8 // bits: 1 type, 2 uncompressed, 4 compressed
}

type compact struct {
	b   []byte
	pos int
}

func (c *compact) byte() (byte, error) {
	if c.pos >= len(c.b) {
		return 0, errThrift
	}
	v := c.b[c.pos]
	c.pos++
	return v, nil
}

func (c *compact) uvarint() (uint64, error) {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		b, err := c.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, nil
		}
	}
	return 0, errThrift
}

func (c *compact) i32() (int32, error) {
	u, err := c.uvarint()
	if err != nil || u > 0xFFFFFFFF {
		return 0, errThrift
	}
	return int32(uint32(u>>1) ^ -uint32(u&1)), nil
}

// fieldHeader returns the next field's id and type; typ 0 is STOP.
func (c *compact) fieldHeader(last int16) (id int16, typ byte, err error) {
	b, err := c.byte()
	if err != nil || b == 0 {
		return 0, 0, err
	}
	typ = b & 0x0f
	if d := b >> 4; d != 0 {
		return last + int16(d), typ, nil
	}
	v, err := c.i32()
	if err != nil || v < -32768 || v > 32767 {
		return 0, 0, errThrift
	}
	return int16(v), typ, nil
}

// skip skips a value of compact type typ.
func (c *compact) skip(typ byte, depth int) error {
	if depth > 16 {
		return errThrift
	}
	switch typ {
	case 1, 2: // bool in a field header
		return nil
	case 3: // i8
		_, err := c.byte()
		return err
	case 4, 5, 6: // i16, i32, i64
		_, err := c.uvarint()
		return err
	case 7: // double
		if len(c.b)-c.pos < 8 {
			return errThrift
		}
		c.pos += 8
		return nil
	case 8: // binary
		n, err := c.uvarint()
		if err != nil || n > uint64(len(c.b)-c.pos) {
			return errThrift
		}
		c.pos += int(n)
		return nil
	case 9, 10: // list, set
		h, err := c.byte()
		if err != nil {
			return err
		}
		n, et := uint64(h>>4), h&0x0f
		if n == 15 {
			if n, err = c.uvarint(); err != nil {
				return err
			}
		}
		if n > uint64(len(c.b)-c.pos) {
			return errThrift
		}
		for range n {
			if et == 1 || et == 2 { // bools in a list take one byte
				et = 3
			}
			if err := c.skip(et, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 11: // map
		n, err := c.uvarint()
		if err != nil || n > uint64(len(c.b)-c.pos) {
			return errThrift
		}
		if n == 0 {
			return nil
		}
		kv, err := c.byte()
		if err != nil {
			return err
		}
		kt, vt := kv>>4, kv&0x0f
		if kt == 1 || kt == 2 {
			kt = 3
		}
		if vt == 1 || vt == 2 {
			vt = 3
		}
		for range n {
			if err := c.skip(kt, depth+1); err != nil {
				return err
			}
			if err := c.skip(vt, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 12: // struct
		var last int16
		for {
			id, t, err := c.fieldHeader(last)
			if err != nil {
				return err
			}
			if t == 0 {
				return nil
			}
			if err := c.skip(t, depth+1); err != nil {
				return err
			}
			last = id
		}
	}
	return errThrift
}

// readPageHeader parses a PageHeader at the front of b and returns it and
// its encoded length.
func readPageHeader(b []byte) (pageHeader, int, error) {
	c := compact{b: b}
	var h pageHeader
	var last int16
	for {
		id, t, err := c.fieldHeader(last)
		if err != nil {
			return h, 0, err
		}
		if t == 0 {
			break
		}
		switch {
		case id == 1 && t == 5:
			h.typ, err = c.i32()
			h.seen |= 1
		case id == 2 && t == 5:
			h.uncompressed, err = c.i32()
			h.seen |= 2
		case id == 3 && t == 5:
			h.compressed, err = c.i32()
			h.seen |= 4
		case id == 5 && t == 12:
			h.hasV1 = true
			err = c.dataPageHeader(&h, false)
		case id == 8 && t == 12:
			h.hasV2 = true
			err = c.dataPageHeader(&h, true)
		default:
			err = c.skip(t, 1)
		}
		if err != nil {
			return h, 0, err
		}
		last = id
	}
	if h.seen != 7 {
		return h, 0, errThrift
	}
	return h, c.pos, nil
}

// dataPageHeader reads a DataPageHeader (v1) or DataPageHeaderV2.
func (c *compact) dataPageHeader(h *pageHeader, v2 bool) error {
	var last int16
	for {
		id, t, err := c.fieldHeader(last)
		if err != nil {
			return err
		}
		if t == 0 {
			return nil
		}
		var v int32
		if t == 5 {
			v, err = c.i32()
		} else {
			err = c.skip(t, 2)
		}
		if err != nil {
			return err
		}
		last = id
		if t != 5 {
			continue
		}
		switch {
		case id == 1:
			h.numValues = v
		case !v2 && id == 2, v2 && id == 4:
			h.encoding = v
		case v2 && id == 2:
			h.numNulls = v
		case v2 && id == 3:
			h.numRows = v
		case v2 && id == 5:
			h.defLen = v
		case v2 && id == 6:
			h.repLen = v
		}
	}
}
