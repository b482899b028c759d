package source

import (
	"fmt"
	"math"
)

// checkVector validates a converted row (finite values) and, for cosine,
// normalises it in place: the norm is the float64 square root of the
// sequential float64 sum of the exact squares, and every element is
// divided in float64 and rounded once to float32 (clarifications 4, 5).
// It returns a detail and the violated rule, or nil.
func checkVector(x []float32, cosine bool) (string, error) {
	for i, v := range x {
		// An all-ones exponent is NaN or ±Inf.
		if math.Float32bits(v)&0x7f800000 == 0x7f800000 {
			if v != v {
				return fmt.Sprintf("element %d", i), ErrNaN
			}
			return fmt.Sprintf("element %d is %v", i, v), ErrInf
		}
	}
	if !cosine {
		return "", nil
	}
	var ss float64
	for _, v := range x {
		f := float64(v)
		ss += f * f
	}
	if ss == 0 {
		return "", ErrZeroNorm
	}
	n := math.Sqrt(ss)
	for i, v := range x {
		x[i] = float32(float64(v) / n)
	}
	return "", nil
}
