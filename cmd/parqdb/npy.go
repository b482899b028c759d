package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"
)

// npyHeader is the header of a .npy file: the Python dict literal that
// NumPy's format (numpy.lib.format, NEP 1) defines, with exactly the keys
// descr (a dtype string such as '<f4'), fortran_order and shape (a tuple
// of non-negative integers).
type npyHeader struct {
	descr   string
	fortran bool
	shape   []int64
}

// parseNpyHeader parses a .npy header dict literal:
//
//	{'descr': '<f4', 'fortran_order': False, 'shape': (2, 50), }
//
// Keys and strings are quoted with ' or " and hold no quote, backslash
// or line break (no dtype string or key needs one), whitespace may stand between tokens, a trailing comma is
// allowed in the dict and in the shape tuple, and a one-element tuple
// needs its comma ((5,)), as in Python. Each of the three keys is given
// exactly once and no other key is; the error says which.
func parseNpyHeader(s string) (npyHeader, error) {
	p := npyParser{s: s}
	var h npyHeader
	seen := map[string]bool{}
	if !p.eat('{') {
		return h, p.fail("want a dict literal starting with {")
	}
	for !p.eat('}') {
		key, err := p.str()
		if err != nil {
			return h, fmt.Errorf("a key: %w", err)
		}
		if seen[key] {
			return h, fmt.Errorf("key %q is given twice", key)
		}
		seen[key] = true
		if !p.eat(':') {
			return h, p.fail(fmt.Sprintf("want : after key %q", key))
		}
		switch key {
		case "descr":
			if h.descr, err = p.str(); err != nil {
				return h, fmt.Errorf("descr: %w (structured dtypes are not supported)", err)
			}
		case "fortran_order":
			switch {
			case p.word("True"):
				h.fortran = true
			case p.word("False"):
			default:
				return h, p.fail("fortran_order: want True or False")
			}
		case "shape":
			if h.shape, err = p.tuple(); err != nil {
				return h, fmt.Errorf("shape: %w", err)
			}
		default:
			return h, fmt.Errorf("unknown key %q: a .npy header has exactly descr, fortran_order and shape", key)
		}
		if !p.eat(',') {
			if !p.eat('}') {
				return h, p.fail("want , or } after the value of " + strconv.Quote(key))
			}
			break
		}
	}
	if p.skip(); p.i != len(p.s) {
		return h, p.fail("unexpected text after the dict")
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, fmt.Errorf("key %q is missing", k)
		}
	}
	return h, nil
}

// npyParser reads the tokens of a header.
type npyParser struct {
	s string
	i int
}

func (p *npyParser) skip() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *npyParser) fail(msg string) error {
	if p.i >= len(p.s) {
		return fmt.Errorf("%s at the end of the header", msg)
	}
	return fmt.Errorf("%s at byte %d (%.10q)", msg, p.i, p.s[p.i:])
}

// eat consumes c after optional whitespace.
func (p *npyParser) eat(c byte) bool {
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// word consumes w after optional whitespace, when no letter follows it.
func (p *npyParser) word(w string) bool {
	p.skip()
	if !strings.HasPrefix(p.s[p.i:], w) {
		return false
	}
	if j := p.i + len(w); j < len(p.s) && (isAlnum(p.s[j]) || p.s[j] == '_') {
		return false
	}
	p.i += len(w)
	return true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// str reads a quoted string.
func (p *npyParser) str() (string, error) {
	p.skip()
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", p.fail("want a quoted string")
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", p.fail("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	if strings.ContainsAny(v, "'\"\\\n") {
		return "", p.fail("want a string without quotes, escapes or line breaks")
	}
	p.i += end + 2
	return v, nil
}

// tuple reads a tuple of non-negative integers: (), (5,), (2, 50), (2, 50,).
func (p *npyParser) tuple() ([]int64, error) {
	if !p.eat('(') {
		return nil, p.fail("want a tuple of integers like (2, 50)")
	}
	out := []int64{}
	comma := false
	for !p.eat(')') {
		p.skip()
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		if j == p.i {
			return nil, p.fail("want a non-negative integer")
		}
		n, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("dimension %s is larger than any file", p.s[p.i:j])
		}
		p.i = j
		out = append(out, n)
		if comma = p.eat(','); !comma {
			if !p.eat(')') {
				return nil, p.fail("want , or ) in the tuple")
			}
			break
		}
	}
	if len(out) == 1 && !comma {
		return nil, errors.New("(n) is a number, not a tuple: a one-dimensional shape is written (n,)")
	}
	return out, nil
}

// npyMagic starts every .npy file.
const npyMagic = "\x93NUMPY"

// readNpy reads a 2-D little-endian float32 or float64 C-order .npy array
// (format versions 1.0, 2.0 and 3.0).
func readNpy(path string) ([][]float32, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decodeNpy(path, data)
}

// decodeNpy is readNpy over the file's bytes; errors start with path.
func decodeNpy(path string, data []byte) ([][]float32, error) {
	if len(data) < 8 || string(data[:6]) != npyMagic {
		return nil, fmt.Errorf("%s: not a .npy file (no \\x93NUMPY magic)", path)
	}
	major, minor := data[6], data[7]
	var hlen, start int
	switch {
	case major == 1 && minor == 0 && len(data) >= 10:
		hlen, start = int(binary.LittleEndian.Uint16(data[8:])), 10
	case (major == 2 || major == 3) && minor == 0 && len(data) >= 12:
		hlen, start = int(binary.LittleEndian.Uint32(data[8:])), 12
	case (major == 1 || major == 2 || major == 3) && minor == 0:
		return nil, fmt.Errorf("%s: truncated: %d bytes end before the header length", path, len(data))
	default:
		return nil, fmt.Errorf("%s: .npy format version %d.%d; want 1.0, 2.0 or 3.0", path, major, minor)
	}
	if hlen > len(data)-start {
		return nil, fmt.Errorf("%s: truncated header: %d bytes declared, %d present", path, hlen, len(data)-start)
	}
	h, err := parseNpyHeader(string(data[start : start+hlen]))
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", path, err)
	}
	var size int
	switch h.descr {
	case "<f4":
		size = 4
	case "<f8":
		size = 8
	default:
		return nil, fmt.Errorf("%s: dtype %q; want '<f4' (little-endian float32) or '<f8' (float64)", path, h.descr)
	}
	if h.fortran {
		return nil, fmt.Errorf("%s: Fortran order is not supported; save the array in C order", path)
	}
	if len(h.shape) != 2 {
		return nil, fmt.Errorf("%s: shape %s is %d-D; want a 2-D array (queries, dimension)", path, npyShape(h.shape), len(h.shape))
	}
	n, d := h.shape[0], h.shape[1]
	body := data[start+hlen:]
	switch {
	case n == 0:
		return nil, fmt.Errorf("%s: shape %s holds no vectors", path, npyShape(h.shape))
	case d == 0:
		return nil, fmt.Errorf("%s: shape %s holds vectors of no values", path, npyShape(h.shape))
	}
	hi, cells := bits.Mul64(uint64(n), uint64(d))
	hi2, need := bits.Mul64(cells, uint64(size))
	if hi != 0 || hi2 != 0 || need > math.MaxInt64 {
		return nil, fmt.Errorf("%s: shape %s of %s needs more than 2^63 bytes; the file has %d data bytes", path, npyShape(h.shape), h.descr, len(body))
	}
	if need != uint64(len(body)) {
		return nil, fmt.Errorf("%s: shape %s of %s needs %d data bytes; the file has %d", path, npyShape(h.shape), h.descr, need, len(body))
	}
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, d)
		for j := range v {
			o := (i*int(d) + j) * size
			if size == 4 {
				v[j] = math.Float32frombits(binary.LittleEndian.Uint32(body[o:]))
			} else {
				v[j] = float32(math.Float64frombits(binary.LittleEndian.Uint64(body[o:])))
			}
		}
		out[i] = v
	}
	return out, nil
}

// npyShape writes a shape as Python does: (2, 50), (5,), ().
func npyShape(shape []int64) string {
	parts := make([]string, len(shape))
	for i, n := range shape {
		parts[i] = strconv.FormatInt(n, 10)
	}
	if len(shape) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
