package lvq

import (
	"math"
	"math/big"
)

// Reference implementation with exact rational arithmetic, written
// independently of the production fast and exact paths.

func refMinMax(x []float32) (lo, hi float32) {
	lo, hi = float32(math.Inf(1)), float32(math.Inf(-1))
	for _, v := range x {
		lo = min(lo, v)
		hi = max(hi, v)
	}
	if lo == 0 {
		lo = 0
	}
	return lo, hi
}

func rat(f float32) *big.Rat { return new(big.Rat).SetFloat64(float64(f)) }

// refCode returns floor(m·(v−o)/(u−o) + 1/2) exactly, clamped to [0, m].
func refCode(v, o, u float32, m int64) int64 {
	if u == o {
		return 0
	}
	q := new(big.Rat).Sub(rat(v), rat(o))
	q.Mul(q, big.NewRat(m, 1))
	q.Quo(q, new(big.Rat).Sub(rat(u), rat(o)))
	q.Add(q, big.NewRat(1, 2))
	// q ≥ 0, so truncating division is floor.
	k := new(big.Int).Quo(q.Num(), q.Denom()).Int64()
	return max(0, min(k, m))
}

func refScale(o, u float32, m int64) float32 {
	q := new(big.Rat).Sub(rat(u), rat(o))
	q.Quo(q, big.NewRat(m, 1))
	f, _ := q.Float32()
	return f
}

// refEncode returns the unpacked codes, offset and scale.
func refEncode(x []float32, m int64) (codes []byte, offset, scale float32) {
	codes = make([]byte, len(x))
	if len(x) == 0 {
		return codes, 0, 0
	}
	o, u := refMinMax(x)
	for i, v := range x {
		codes[i] = byte(refCode(v, o, u, m))
	}
	return codes, o, refScale(o, u, m)
}

func unpack4(code []byte, dim int) []byte {
	out := make([]byte, dim)
	for i := range out {
		out[i] = code[i/2] >> (4 * (i & 1)) & 15
	}
	return out
}
