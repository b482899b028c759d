package source

import (
	"fmt"
	"math"
)

// checkVector validates a converted row (finite values) and, for cosine,
// normalises it in place: the norm is the float64 square root of the
// sequential float64 sum of the exact squares, and every element is
// divided in float64 and rounded once to float32 (clarifications 4, 5).
// It returns the violated rule and a detail, or nil.
func checkVector(x []float32, cosine bool) (error, string) {
	var ss float64
	for i, v := range x {
		f := float64(v)
		if f != f {
			return ErrNaN, fmt.Sprintf("element %d", i)
		}
		if math.IsInf(f, 0) {
			return ErrInf, fmt.Sprintf("element %d is %v", i, v)
		}
		ss += f * f
	}
	if !cosine {
		return nil, ""
	}
	if ss == 0 {
		return ErrZeroNorm, ""
	}
	n := math.Sqrt(ss)
	for i, v := range x {
		x[i] = float32(float64(v) / n)
	}
	return nil, ""
}
