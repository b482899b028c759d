package lvq

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// The property tests compare Encode8/Encode4 with the rational reference.
// -lvq.vectors (or PARQDB_LVQ_VECTORS) raises the number of random vectors,
// e.g. to 5000000 for a long run.
var numVectors = flag.Int("lvq.vectors", envInt("PARQDB_LVQ_VECTORS", 200000), "random vectors per property test")

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// checkEncode encodes x both ways and compares with the reference. When
// fastOnly is set, codes are compared with the production exact path
// (exactCode, itself checked against the reference elsewhere) instead of
// the slow rational reference, so that millions of vectors stay cheap.
func checkEncode(t testing.TB, x []float32, fastOnly bool) {
	t.Helper()
	for _, m := range []int64{MaxCode8, MaxCode4} {
		var codes []byte
		var o, s float32
		if m == MaxCode8 {
			codes = make([]byte, len(x))
			o, s = Encode8(codes, x)
		} else {
			packed := make([]byte, CodeLen(4, len(x)))
			o, s = Encode4(packed, x)
			if len(x)%2 == 1 && packed[len(packed)-1]>>4 != 0 {
				t.Fatalf("x=%v: unused high nibble is %x", x, packed[len(packed)-1])
			}
			codes = unpack4(packed, len(x))
		}
		wo, wu := refMinMax(x)
		if len(x) == 0 {
			wo, wu = 0, 0
		}
		var wantCodes []byte
		var ws float32
		if fastOnly {
			wantCodes = make([]byte, len(x))
			if wu != wo {
				for i, v := range x {
					wantCodes[i] = byte(exactCode(v, wo, wu, uint64(m)))
				}
			}
			ws = refScale(wo, wu, m)
		} else {
			wantCodes, _, ws = refEncode(x, m)
		}
		if f32bits(o) != f32bits(wo) || f32bits(s) != f32bits(ws) || !bytes.Equal(codes, wantCodes) {
			t.Fatalf("m=%d x=%v (bits %x):\n got  %v %v %v\n want %v %v %v", m, x, bitsOf(x), codes, o, s, wantCodes, wo, ws)
		}
		checkDecodeBounds(t, x, codes, o, s, m)
	}
}

func bitsOf(x []float32) []uint32 {
	b := make([]uint32, len(x))
	for i, v := range x {
		b[i] = math.Float32bits(v)
	}
	return b
}

// checkDecodeBounds asserts that each reconstruction is finite and within
// scale/2 of its source (plus the roundings of scale, of the float64 sum and
// of the final float32 conversion).
func checkDecodeBounds(t testing.TB, x []float32, codes []byte, o, s float32, m int64) {
	t.Helper()
	for i, v := range x {
		xh := Reconstruct(float64(o), float64(s), codes[i])
		if math.IsInf(float64(xh), 0) || math.IsNaN(float64(xh)) {
			t.Fatalf("x=%v: reconstruction %d not finite", x, i)
		}
		err := math.Abs(float64(xh) - float64(v))
		// m·(half an ulp of scale), relative or, for subnormal scales, absolute.
		tol := float64(s)/2 + float64(m)*(float64(s)*0x1p-23+0x1p-150) + math.Abs(float64(v))*0x1p-22 + 0x1p-149
		if err > tol {
			t.Fatalf("x=%v: |x̂_%d − x_%d| = %g > %g (code %d, offset %v, scale %v)", x, i, i, err, tol, codes[i], o, s)
		}
	}
}

// Value generators, from benign to adversarial.
var valueGens = []struct {
	name string
	f    func(r *rand.Rand) float32
}{
	{"gauss", func(r *rand.Rand) float32 { return float32(r.NormFloat64()) }},
	{"uniform", func(r *rand.Rand) float32 { return r.Float32()*2 - 1 }},
	{"smallint", func(r *rand.Rand) float32 { return float32(r.IntN(300)) }},
	{"bits", func(r *rand.Rand) float32 { // any finite float32
		for {
			f := math.Float32frombits(r.Uint32())
			if !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) {
				return f
			}
		}
	}},
	{"subnormal", func(r *rand.Rand) float32 {
		f := math.Float32frombits(r.Uint32N(1 << 23))
		if r.IntN(2) == 0 {
			f = -f
		}
		return f
	}},
	{"huge", func(r *rand.Rand) float32 {
		f := math.Float32frombits(math.Float32bits(maxF) - r.Uint32N(1<<22))
		if r.IntN(2) == 0 {
			f = -f
		}
		return f
	}},
	{"mixed", func(r *rand.Rand) float32 {
		switch r.IntN(6) {
		case 0:
			return 0
		case 1:
			return negZero
		case 2:
			return math.Float32frombits(r.Uint32N(1 << 23))
		case 3:
			return maxF
		case 4:
			return -maxF
		}
		return float32(r.NormFloat64() * math.Exp2(float64(r.IntN(200)-100)))
	}},
	{"fewvalues", func(r *rand.Rand) float32 { return []float32{-1, 0.25, 0.5, 3}[r.IntN(4)] }},
}

func TestEncodeRandomMatchesReference(t *testing.T) {
	n := *numVectors
	if testing.Short() {
		n /= 10
	}
	for gi, g := range valueGens {
		t.Run(g.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(gi)))
			per := n / len(valueGens)
			for k := 0; k < per; k++ {
				d := 1 + r.IntN(16)
				if k%1000 == 0 {
					d = 1 + r.IntN(1024)
				}
				x := make([]float32, d)
				for i := range x {
					x[i] = g.f(r)
				}
				// Every 64th vector also against the rational reference.
				checkEncode(t, x, k%64 != 0)
			}
		})
	}
}

// nearTie returns a float32 within ulps of the value whose exact code
// quotient is k+1/2 for range [o, u].
func nearTie(o, u float32, k, m int64, ulps int) float32 {
	t := float64(o) + (float64(u)-float64(o))*(float64(k)+0.5)/float64(m)
	f := float32(t)
	for ; ulps > 0; ulps-- {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	for ; ulps < 0; ulps++ {
		f = math.Nextafter32(f, float32(math.Inf(-1)))
	}
	return max(o, min(u, f))
}

func randRange(r *rand.Rand) (o, u float32) {
	switch r.IntN(5) {
	case 0: // ordinary
		o = float32(r.NormFloat64())
		u = o + float32(r.ExpFloat64())
	case 1: // exact ties: u−o = 2m·r·δ, o a multiple of δ
		delta := math.Exp2(float64(r.IntN(60) - 30))
		o = float32(float64(r.IntN(1<<16)-1<<15) * delta)
		u = float32(float64(o) + 2*255*15*float64(1+r.IntN(7))*delta)
	case 2: // subnormal range
		o = math.Float32frombits(r.Uint32N(1 << 22))
		u = o + math.Float32frombits(1+r.Uint32N(1<<22))
	case 3: // huge range
		o = -math.Float32frombits(math.Float32bits(maxF) - r.Uint32N(1<<24))
		u = math.Float32frombits(math.Float32bits(maxF) - r.Uint32N(1<<24))
	default: // wide exponent spread
		o = -math.Float32frombits(r.Uint32N(0x7f000000))
		u = math.Float32frombits(r.Uint32N(0x7f000000))
	}
	if !(u > o) || math.IsInf(float64(u), 0) {
		return 0, 1
	}
	return o, u
}

func TestEncodeNearTiesMatchReference(t *testing.T) {
	n := *numVectors / 4
	if testing.Short() {
		n /= 10
	}
	r := rand.New(rand.NewPCG(8, 8))
	for k := 0; k < n; k++ {
		o, u := randRange(r)
		d := 2 + r.IntN(14)
		x := make([]float32, d)
		x[0], x[1] = o, u
		m := []int64{MaxCode8, MaxCode4}[r.IntN(2)]
		for i := 2; i < d; i++ {
			x[i] = nearTie(o, u, r.Int64N(m), m, r.IntN(5)-2)
		}
		r.Shuffle(d, func(i, j int) { x[i], x[j] = x[j], x[i] })
		checkEncode(t, x, k%16 != 0)
	}
}

// TestExactCodeMatchesReference checks the production exact path (128-bit
// and math/big) on its own against the rational reference on near-tie and
// tie values, where it is the deciding code.
func TestExactCodeMatchesReference(t *testing.T) {
	n := *numVectors / 10
	if testing.Short() {
		n /= 10
	}
	r := rand.New(rand.NewPCG(9, 9))
	for k := 0; k < n; k++ {
		o, u := randRange(r)
		for _, m := range []int64{MaxCode8, MaxCode4} {
			v := nearTie(o, u, r.Int64N(m), m, r.IntN(3)-1)
			if r.IntN(8) == 0 {
				v = []float32{o, u}[r.IntN(2)]
			}
			got := exactCode(v, o, u, uint64(m))
			if want := refCode(v, o, u, m); int64(got) != want {
				t.Fatalf("exactCode(%v, %v, %v, %d) = %d, want %d", v, o, u, m, got, want)
			}
		}
	}
}

func TestScaleMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	n := *numVectors / 4
	if testing.Short() {
		n /= 10
	}
	for k := 0; k < n; k++ {
		o, u := randRange(r)
		for _, m := range []uint64{MaxCode8, MaxCode4} {
			e := newEncoder(o, u, m)
			got := e.scale()
			if want := refScale(o, u, int64(m)); f32bits(got) != f32bits(want) {
				t.Fatalf("scale(%v, %v, %d) = %v, want %v", o, u, m, got, want)
			}
			if math.IsInf(float64(got), 0) {
				t.Fatalf("scale(%v, %v) not finite", o, u)
			}
		}
	}
}

// TestScaleDoubleRounding covers inputs where float32(fl64(fl64(u−o)/m))
// is not the correctly rounded quotient: u−o needs more than 53 bits,
// fl64(u−o) = 255·M for a float32 midpoint M, and the exact quotient lies
// just above M. (When u−o is exact in float64, fl64((u−o)/m) can never sit
// on a float32 midpoint unless the quotient does, so such inputs must have
// a wide exponent spread.) The inputs are constructed, not searched for.
func TestScaleDoubleRounding(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	found := 0
	for k := 0; k < 100000 && found < 200; k++ {
		eM := r.IntN(120) - 60
		a := int64(1<<24 + 2*r.IntN(1<<23) + 1) // 25-bit odd: M = a·2^(eM−24) is a float32 midpoint
		n := 255 * a
		rem := n & 511
		if rem != 1 && rem != 3 {
			continue
		}
		unit := math.Exp2(float64(eM - 24))
		u := float32(float64(n-rem) * unit)
		if float64(u) != float64(n-rem)*unit {
			t.Fatalf("construction: u not exact")
		}
		top := 0
		if rem == 3 {
			top = 1
		}
		o := -float32(float64(rem)*unit + math.Exp2(float64(top-23))*unit)
		naive := float32((float64(u) - float64(o)) / 255)
		want := refScale(o, u, 255)
		if naive == want {
			continue // even neighbour was the upper one
		}
		found++
		e := newEncoder(o, u, 255)
		if got := e.scale(); got != want {
			t.Fatalf("scale(%v, %v) = %v, want %v (naive %v)", o, u, got, want, naive)
		}
		x := []float32{u, o, (u + o) / 2}
		checkEncode(t, x, false)
	}
	if found == 0 {
		t.Fatal("no double-rounding case constructed")
	}
	t.Logf("%d double-rounding cases checked", found)
}

func TestEncodeBoundaryVectors(t *testing.T) {
	vs := [][]float32{
		{0}, {negZero}, {maxF}, {-maxF}, {minSub},
		{-maxF, maxF}, {maxF, -maxF, 0},
		{minSub, -minSub}, {0, minSub}, {negZero, minSub, 0},
		{-maxF, minSub}, {minSub, maxF},
		{1, 1, 1, 1, 1}, {-0.5, -0.5},
		{1, math.Nextafter32(1, 2)},
		{1, math.Nextafter32(1, 2), math.Nextafter32(math.Nextafter32(1, 2), 2)},
		{-maxF, maxF, math.Float32frombits(0x7f7ffffe)},
	}
	for _, x := range vs {
		t.Run(fmt.Sprint(x), func(t *testing.T) { checkEncode(t, x, false) })
	}
}
