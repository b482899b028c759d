package serving

import (
	"fmt"
	"math"
	"net/http"
)

// CheckDim returns nil when a query vector named where ("vector",
// "vectors[3]", "query_vector", "each vector") has the index's dimension
// dim, and otherwise a wrong_dimension error naming both.
func CheckDim(where string, n, dim int, index string) error {
	if n == dim {
		return nil
	}
	return Errorf(http.StatusBadRequest, CodeWrongDimension, "%s has %d values; index %q has dimension %d", where, n, index, dim)
}

// VectorProblem returns "" when every value of query vector v is finite
// and, under the cosine metric, some value is not zero; otherwise what is
// wrong, worded to follow the vector's name: "[3] = NaN is not a finite
// float32", " is all zeros: …". With InvalidVector it is the one check of
// query vectors, and its messages, for the HTTP API, SQL and the C library.
// It allocates only to report a problem.
func VectorProblem(v []float32, cosine bool) string {
	if finite, nonzero := scanVector(v); finite && (nonzero || !cosine) {
		return ""
	}
	var nonzero uint32 // every value's bits but the sign, or-ed
	for j, x := range v {
		b := math.Float32bits(x)
		if b&0x7f800000 == 0x7f800000 { // the exponent of ±Inf and NaN
			if x == x {
				return fmt.Sprintf("[%d] = %g is not a finite float32 (a number beyond ±3.4e38 overflows to it)", j, x)
			}
			return fmt.Sprintf("[%d] = NaN is not a finite float32", j)
		}
		nonzero |= b &^ (1 << 31)
	}
	if nonzero == 0 && cosine {
		return " is all zeros: it has no direction under the cosine metric"
	}
	return ""
}

// scanVector reports whether every value of v is finite and whether some
// value is not ±0, in one branch-free pass over two values at a time: a
// value's bits but the sign, plus the exponent's lowest bit, carry into
// bit 31 exactly when the exponent is all ones (±Inf, NaN), and never
// into the next value's lane.
func scanVector(v []float32) (finite, nonzero bool) {
	const (
		abs2   = 0x7fffffff_7fffffff
		carry2 = 0x00800000_00800000
		top2   = 0x80000000_80000000
	)
	var over, bits, over1, bits1 uint64
	i := 0
	for ; i+3 < len(v); i += 4 { // two chains
		x := (uint64(math.Float32bits(v[i])) | uint64(math.Float32bits(v[i+1]))<<32) & abs2
		y := (uint64(math.Float32bits(v[i+2])) | uint64(math.Float32bits(v[i+3]))<<32) & abs2
		over |= x + carry2
		bits |= x
		over1 |= y + carry2
		bits1 |= y
	}
	over |= over1
	bits |= bits1
	for ; i < len(v); i++ { // the last 0-3 values, one a lane
		x := uint64(math.Float32bits(v[i])) & abs2
		over |= x + carry2
		bits |= x
	}
	return over&top2 == 0, bits != 0
}

// InvalidVector is the invalid_vector error of the query vector named
// where with problem p (VectorProblem).
func InvalidVector(where, p string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidVector, Message: where + p}
}
