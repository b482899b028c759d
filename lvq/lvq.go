package lvq

import "math"

// Maximum codes of the two encodings (schema §7: 16 and 256 distinct codes).
const (
	MaxCode4 = 15
	MaxCode8 = 255
)

// CodeLen returns the length in bytes of one code: dim for 8 bits and
// ceil(dim/2) for 4 bits. It returns -1 for any other bit width or a
// negative dim.
func CodeLen(bits, dim int) int {
	if dim < 0 {
		return -1
	}
	switch bits {
	case 8:
		return dim
	case 4:
		return (dim + 1) / 2
	}
	return -1
}

// Encode8 encodes x as LVQ8 into code, one byte per dimension, and returns
// the offset and scale. x must be finite (the caller validates source
// vectors); Encode8 panics if len(code) != len(x). An empty x yields
// offset 0 and scale 0.
func Encode8(code []byte, x []float32) (offset, scale float32) {
	if len(code) != len(x) {
		panic("lvq: Encode8 code length mismatch")
	}
	offset, upper := minMax(x)
	if upper == offset {
		clear(code)
		return offset, 0
	}
	e := newEncoder(offset, upper, MaxCode8)
	for i, v := range x {
		code[i] = byte(e.code(v))
	}
	return offset, e.scale()
}

// Encode4 encodes x as LVQ4 into code and returns the offset and scale.
// Dimension 2j goes to the low nibble of code[j] and dimension 2j+1 to its
// high nibble; when len(x) is odd the final high nibble is zero. x must be
// finite; Encode4 panics if len(code) != CodeLen(4, len(x)).
func Encode4(code []byte, x []float32) (offset, scale float32) {
	if len(code) != (len(x)+1)/2 {
		panic("lvq: Encode4 code length mismatch")
	}
	offset, upper := minMax(x)
	clear(code)
	if upper == offset {
		return offset, 0
	}
	e := newEncoder(offset, upper, MaxCode4)
	for i, v := range x {
		code[i/2] |= byte(e.code(v)) << (4 * (i & 1))
	}
	return offset, e.scale()
}

// Decode8 writes the reconstruction of an LVQ8 code into dst:
// dst_i = float32(float64(offset) + float64(scale)*float64(code_i)), the
// float64 value saturated to ±MaxFloat32 and rounded once to float32 (see
// Reconstruct and docs/lvq.md). It panics if
// len(dst) != len(code).
func Decode8(dst []float32, code []byte, offset, scale float32) {
	if len(dst) != len(code) {
		panic("lvq: Decode8 length mismatch")
	}
	o, s := float64(offset), float64(scale)
	for i, c := range code {
		dst[i] = Reconstruct(o, s, c)
	}
}

// Decode4 writes the reconstruction of an LVQ4 code of len(dst) dimensions
// into dst, in the nibble order of Encode4 and with the arithmetic of
// Decode8. It panics if len(code) != CodeLen(4, len(dst)).
func Decode4(dst []float32, code []byte, offset, scale float32) {
	if len(code) != (len(dst)+1)/2 {
		panic("lvq: Decode4 length mismatch")
	}
	o, s := float64(offset), float64(scale)
	for i := range dst {
		dst[i] = Reconstruct(o, s, (code[i/2]>>(4*(i&1)))&15)
	}
}

// Reconstruct returns one reconstructed value x_hat = offset + scale*code
// computed in float64 from float64(offset) and float64(scale), saturated to
// ±MaxFloat32 and rounded once to float32. scale*code is exact in float64 (a
// 24-bit by 8-bit product), so fused multiply-add and separate operations
// agree. Saturation only matters when upper lies within a few ulps of
// MaxFloat32 and scale was rounded up: the plain formula would then give
// +Inf, which schema §7 forbids (docs/lvq.md).
func Reconstruct(offset, scale float64, code byte) float32 {
	v := offset + scale*float64(code)
	return float32(max(-math.MaxFloat32, min(math.MaxFloat32, v)))
}

// minMax returns min and max of x compared numerically. A zero minimum is
// returned as +0 whichever zero occurred (clarification 3 makes its sign
// insignificant; one canonical bit pattern keeps output reproducible).
func minMax(x []float32) (lo, hi float32) {
	if len(x) == 0 {
		return 0, 0
	}
	lo, hi = x[0], x[0]
	for _, v := range x[1:] {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	if lo == 0 {
		lo = 0
	}
	return lo, hi
}

// FromFloat64 converts a source double to float32 with round-to-nearest-even
// (clarification 5). It returns ErrNotFinite for NaN, ±Inf, and finite
// values whose rounding overflows to ±Inf.
func FromFloat64(v float64) (float32, error) {
	f := float32(v)
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return 0, ErrNotFinite
	}
	return f, nil
}

// Normalize writes x/‖x‖ into dst for the cosine metric (clarification 4):
// the norm is the float64 square root of the sequential (index order)
// float64 sum of the exact float64 squares, each element is divided in
// float64 and rounded once to float32. It returns ErrNotFinite if x holds a
// NaN or ±Inf and ErrZeroNorm if every element is zero; dst is then
// unspecified. dst and x may be the same slice; Normalize panics if their
// lengths differ.
func Normalize(dst, x []float32) error {
	if len(dst) != len(x) {
		panic("lvq: Normalize length mismatch")
	}
	var ss float64
	for _, v := range x {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return ErrNotFinite
		}
		ss += f * f
	}
	if ss == 0 {
		return ErrZeroNorm
	}
	n := math.Sqrt(ss)
	for i, v := range x {
		dst[i] = float32(float64(v) / n)
	}
	return nil
}
