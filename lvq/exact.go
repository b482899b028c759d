package lvq

import (
	"math"
	"math/big"
	"math/bits"
)

// tieBand is the half-width of the band around a half-way point inside
// which the float64 fast path does not trust itself. The fast path computes
// t = fl(fl(fl(x−o)·m) / fl(u−o)) + 0.5 with four roundings of relative
// error ≤ 2^-53 each on a value ≤ 255, then one addition rounding of
// ≤ 2^-45; its absolute error is below 255·4.01·2^-53 + 2^-45 < 2^-42. The
// band is four times wider than that.
const tieBand = 0x1p-40

// encoder encodes the values of one vector whose minimum is offset and
// maximum is upper (upper > offset).
type encoder struct {
	offset, upper float32
	o64, d64, m   float64 // d64 = fl(upper − offset)
	maxCode       uint64
	dExact        bool // d64 == upper − offset exactly
}

func newEncoder(offset, upper float32, maxCode uint64) encoder {
	o, u := float64(offset), float64(upper)
	d := u - o
	// TwoSum: err is the exact rounding error of u + (−o).
	bb := d - u
	err := (u - (d - bb)) + (-o - bb)
	return encoder{
		offset: offset, upper: upper,
		o64: o, d64: d, m: float64(maxCode),
		maxCode: maxCode,
		dExact:  err == 0,
	}
}

// code returns round-half-up(m·(v−offset)/(upper−offset)) of the exact real
// value, clamped to [0, m].
func (e *encoder) code(v float32) uint64 {
	t := (float64(v)-e.o64)*e.m/e.d64 + 0.5
	k := math.Floor(t)
	if f := t - k; f > tieBand && f < 1-tieBand && k >= 0 && k <= e.m {
		return uint64(k)
	}
	return exactCode(v, e.offset, e.upper, e.maxCode)
}

// scale returns (upper−offset)/m rounded once to float32 (ties to even).
// When d64 is exact, s = fl64(d64/m) is the float64 nearest to the exact
// quotient, so no float32 rounding boundary lies strictly between them:
// converting s to float32 is correctly rounded unless s sits exactly on a
// float32 midpoint (double rounding). That case and an inexact d64 are
// decided with rational arithmetic. The result is finite because
// (upper−offset)/m ≤ 2·MaxFloat32/15.
func (e *encoder) scale() float32 {
	if e.dExact {
		s := e.d64 / e.m
		f := float32(s)
		if float64(f) == s {
			return f
		}
		var other float32
		if float64(f) < s {
			other = math.Nextafter32(f, float32(math.Inf(1)))
		} else {
			other = math.Nextafter32(f, float32(math.Inf(-1)))
		}
		if s != (float64(f)+float64(other))/2 {
			return f
		}
	}
	return exactScale(e.offset, e.upper, e.maxCode)
}

func exactScale(offset, upper float32, maxCode uint64) float32 {
	d := new(big.Rat).SetFloat64(float64(upper))
	d.Sub(d, new(big.Rat).SetFloat64(float64(offset)))
	d.Quo(d, new(big.Rat).SetUint64(maxCode))
	f, _ := d.Float32()
	return f
}

// decompose returns the signed integer significand and exponent of a finite
// float32: f = mant·2^exp with exp ≥ −149.
func decompose(f float32) (mant int64, exp int) {
	b := math.Float32bits(f)
	field := int(b>>23) & 0xff
	mant = int64(b & (1<<23 - 1))
	if field == 0 {
		exp = -149
	} else {
		mant |= 1 << 23
		exp = field - 150
	}
	if b>>31 != 0 {
		mant = -mant
	}
	return mant, exp
}

// exactCode decides one code exactly. With all three values written as
// integers X, O, U times a common power of two, the code is
// floor((2m·(X−O) + (U−O)) / (2·(U−O))), which is round-half-up of
// m·(X−O)/(U−O). When the exponents span at most 37 bits the integers fit
// in 61 bits and 128-bit arithmetic suffices; otherwise math/big is used.
func exactCode(v, offset, upper float32, maxCode uint64) uint64 {
	type part struct {
		m int64
		e int
	}
	var p [3]part
	emin, emax := math.MaxInt, math.MinInt
	for i, f := range [3]float32{v, offset, upper} {
		m, e := decompose(f)
		p[i] = part{m, e}
		if m != 0 {
			emin = min(emin, e)
			emax = max(emax, e)
		}
	}
	if emax-emin <= 37 {
		var s [3]int64
		for i := range p {
			if p[i].m != 0 {
				s[i] = p[i].m << (p[i].e - emin)
			}
		}
		a := uint64(s[0] - s[1]) // < 2^62
		d := uint64(s[2] - s[1]) // < 2^62, > 0
		hi, lo := bits.Mul64(2*maxCode, a)
		var carry uint64
		lo, carry = bits.Add64(lo, d, 0)
		hi += carry
		q, _ := bits.Div64(hi, lo, 2*d) // q ≤ m, so hi < 2d
		return min(q, maxCode)
	}
	var s [3]*big.Int
	for i := range p {
		s[i] = big.NewInt(p[i].m)
		if p[i].m != 0 {
			s[i].Lsh(s[i], uint(p[i].e-emin))
		}
	}
	a := new(big.Int).Sub(s[0], s[1])
	d := new(big.Int).Sub(s[2], s[1])
	num := new(big.Int).Mul(a, new(big.Int).SetUint64(2*maxCode))
	num.Add(num, d)
	num.Quo(num, d.Lsh(d, 1))
	return min(num.Uint64(), maxCode)
}
