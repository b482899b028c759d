package source

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
)

// safely runs f, turning a decoder panic on corrupt input into an error.
func safely(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("parquet decoder panic: %v", p)
		}
	}()
	return f()
}

// vecShape is where a file's vector column sits and how its levels read.
type vecShape struct {
	col     int  // leaf column index
	double  bool // DOUBLE elements (else FLOAT)
	maxDef  byte // definition level of a present element
	listDef byte // definition level from which an element exists
	nullDef byte // definition levels below this mean a null vector
	shape   string
}

// rowStatus is what vecCursor learned about one row.
type rowStatus struct {
	null     bool // null vector
	count    int  // elements, null ones included
	nullElem int  // index of the first null element, or -1
}

// vecCursor walks the pages of a vector column chunk row by row.
type vecCursor struct {
	s     *vecShape
	pages parquet.Pages
	page  parquet.Page
	rep   []byte
	def   []byte
	li, n int // level index and count in page
	vi    int // index into the page's non-null values
	f32   []float32
	f64   []float64
	idx   []int32 // dictionary indexes, when the page is dictionary encoded
	dnum  int     // dictionary length
}

func (c *vecCursor) reset(s *vecShape, pages parquet.Pages) {
	c.release()
	*c = vecCursor{s: s, pages: pages}
}

func (c *vecCursor) release() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
}

func (c *vecCursor) close() {
	c.release()
	if c.pages != nil {
		_ = c.pages.Close()
		c.pages = nil
	}
}

// vecPagesRead counts the pages vecCursor has taken from parquet-go (each
// one decompressed and decoded), for tests and benchmarks.
var vecPagesRead atomic.Int64

// nextPage loads the next page; io.EOF at the end of the chunk.
func (c *vecCursor) nextPage() error {
	c.release()
	c.rep, c.def, c.f32, c.f64, c.idx = nil, nil, nil, nil, nil
	c.li, c.n, c.vi, c.dnum = 0, 0, 0, 0
	return safely(func() error {
		for {
			p, err := c.pages.ReadPage()
			if err != nil {
				return err
			}
			c.page = p
			vecPagesRead.Add(1)
			if p.NumValues() == 0 {
				parquet.Release(p)
				c.page = nil
				continue
			}
			return c.load(p)
		}
	})
}

func (c *vecCursor) load(p parquet.Page) error {
	c.rep, c.def = p.RepetitionLevels(), p.DefinitionLevels()
	c.n = int(p.NumValues())
	if len(c.rep) != c.n || len(c.def) != c.n {
		return fmt.Errorf("page has %d values but %d repetition and %d definition levels", c.n, len(c.rep), len(c.def))
	}
	present := bytes.Count(c.def, []byte{c.s.maxDef})
	data := p.Data()
	var have int
	if d := p.Dictionary(); d != nil {
		if data.Kind() != encoding.Int32 {
			return fmt.Errorf("dictionary page indexes of kind %v", data.Kind())
		}
		c.idx = data.Int32()
		have = len(c.idx)
		dd := d.Page().Data()
		switch {
		case !c.s.double && dd.Kind() == encoding.Float:
			c.f32 = dd.Float()
			c.dnum = len(c.f32)
		case c.s.double && dd.Kind() == encoding.Double:
			c.f64 = dd.Double()
			c.dnum = len(c.f64)
		default:
			return fmt.Errorf("dictionary of kind %v in a %s column", dd.Kind(), elemName(c.s.double))
		}
	} else {
		switch {
		case !c.s.double && data.Kind() == encoding.Float:
			c.f32 = data.Float()
			have = len(c.f32)
		case c.s.double && data.Kind() == encoding.Double:
			c.f64 = data.Double()
			have = len(c.f64)
		default:
			return fmt.Errorf("page values of kind %v in a %s column", data.Kind(), elemName(c.s.double))
		}
	}
	if have != present {
		return fmt.Errorf("page has %d non-null levels but %d values", present, have)
	}
	return nil
}

func elemName(double bool) string {
	if double {
		return "double"
	}
	return "float"
}

// value returns non-null value i of the page as float32 (doubles rounded
// to nearest even).
func (c *vecCursor) value(i int) (float32, error) {
	if c.idx != nil {
		j := int(c.idx[i])
		if j < 0 || j >= c.dnum {
			return 0, fmt.Errorf("dictionary index %d out of range [0,%d)", j, c.dnum)
		}
		i = j
	}
	if c.f64 != nil {
		return float32(c.f64[i]), nil
	}
	return c.f32[i], nil
}

// errCorruptLevels marks level sequences that cannot come from a valid file.
var errCorruptLevels = errors.New("repetition levels do not start a row")

// readRow reads the next row's elements into dst (up to len(dst)) and
// reports its shape. io.EOF means the chunk has no more rows.
func (c *vecCursor) readRow(dst []float32) (rowStatus, error) {
	rs := rowStatus{nullElem: -1}
	if c.li == c.n {
		if err := c.nextPage(); err != nil {
			return rs, err
		}
	}
	if c.rep[c.li] != 0 {
		return rs, errCorruptLevels
	}
	if d := c.def[c.li]; d < c.s.listDef {
		rs.null = d < c.s.nullDef
		c.li++
		return rs, nil
	}
	// Fast path: the whole row is in this page, all present.
	if D := len(dst); D > 0 && c.n-c.li > D {
		li := c.li
		if c.rep[li+D] == 0 && bytes.Count(c.def[li:li+D], []byte{c.s.maxDef}) == D &&
			bytes.Count(c.rep[li+1:li+D], []byte{1}) == D-1 {
			switch {
			case c.idx != nil:
				for k, j := range c.idx[c.vi : c.vi+D] {
					if j < 0 || int(j) >= c.dnum {
						return rs, fmt.Errorf("dictionary index %d out of range [0,%d)", j, c.dnum)
					}
					if c.f64 != nil {
						dst[k] = float32(c.f64[j])
					} else {
						dst[k] = c.f32[j]
					}
				}
			case c.f64 != nil:
				for k, v := range c.f64[c.vi : c.vi+D] {
					dst[k] = float32(v)
				}
			default:
				copy(dst, c.f32[c.vi:c.vi+D])
			}
			c.li += D
			c.vi += D
			rs.count = D
			return rs, nil
		}
	}
	first := true
	for {
		if c.li == c.n {
			err := c.nextPage()
			if err == io.EOF {
				return rs, nil
			}
			if err != nil {
				return rs, err
			}
		}
		if !first && c.rep[c.li] == 0 {
			return rs, nil
		}
		first = false
		if c.def[c.li] == c.s.maxDef {
			v, err := c.value(c.vi)
			if err != nil {
				return rs, err
			}
			c.vi++
			if rs.count < len(dst) {
				dst[rs.count] = v
			}
		} else if rs.nullElem < 0 {
			rs.nullElem = rs.count
		}
		rs.count++
		c.li++
	}
}

// keyCursor walks the pages of a key column chunk, one value per row.
type keyCursor struct {
	pages parquet.Pages
	page  parquet.Page
	vr    parquet.ValueReader
	buf   []parquet.Value
	bi    int
	bn    int
	eof   bool // page reader exhausted
}

func (c *keyCursor) reset(pages parquet.Pages) {
	c.close()
	buf := c.buf
	if buf == nil {
		buf = make([]parquet.Value, 256)
	}
	*c = keyCursor{pages: pages, buf: buf}
}

func (c *keyCursor) close() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	if c.pages != nil {
		_ = c.pages.Close()
		c.pages = nil
	}
}

// next returns the next value; its bytes are valid until the next call.
// io.EOF means the chunk has no more rows.
func (c *keyCursor) next() (parquet.Value, error) {
	for c.bi == c.bn {
		if err := c.fill(); err != nil {
			return parquet.Value{}, err
		}
	}
	v := c.buf[c.bi]
	c.bi++
	return v, nil
}

func (c *keyCursor) fill() error {
	return safely(func() error {
		c.bi, c.bn = 0, 0
		if c.vr != nil && !c.eof {
			n, err := c.vr.ReadValues(c.buf)
			c.bn = n
			if err == io.EOF {
				c.eof = true
			} else if err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
		}
		// need a new page
		if c.page != nil {
			parquet.Release(c.page)
			c.page = nil
		}
		p, err := c.pages.ReadPage()
		if err != nil {
			return err
		}
		c.page = p
		c.vr = p.Values()
		c.eof = false
		return nil
	})
}
