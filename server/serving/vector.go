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

// InvalidVector is the invalid_vector error of the query vector named
// where with problem p (VectorProblem).
func InvalidVector(where, p string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidVector, Message: where + p}
}
