package lvq

import "errors"

var (
	// ErrZeroNorm reports a vector whose Euclidean norm is zero, which
	// cannot be normalised for the cosine metric (clarification 4).
	ErrZeroNorm = errors.New("lvq: vector has zero norm")
	// ErrNotFinite reports a NaN or infinite value, or a double that
	// converts to an infinite float32 (clarification 5).
	ErrNotFinite = errors.New("lvq: value is not finite")
)
