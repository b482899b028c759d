package lvq

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"
)

var (
	negZero = float32(math.Copysign(0, -1))
	maxF    = float32(math.MaxFloat32)
	minSub  = math.Float32frombits(1)
)

func f32bits(f float32) uint32 { return math.Float32bits(f) }

func TestCodeLen(t *testing.T) {
	tests := []struct{ bits, dim, want int }{
		{8, 0, 0}, {8, 1, 1}, {8, 768, 768},
		{4, 0, 0}, {4, 1, 1}, {4, 2, 1}, {4, 3, 2}, {4, 767, 384}, {4, 768, 384},
		{2, 8, -1}, {16, 8, -1}, {8, -1, -1}, {4, -3, -1},
	}
	for _, tt := range tests {
		if got := CodeLen(tt.bits, tt.dim); got != tt.want {
			t.Errorf("CodeLen(%d, %d) = %d, want %d", tt.bits, tt.dim, got, tt.want)
		}
	}
}

func TestEncodeExamples(t *testing.T) {
	tests := []struct {
		name   string
		x      []float32
		code8  []byte
		code4  []byte // packed
		offset float32
		scale8 float32
		scale4 float32
	}{
		{"two points", []float32{0, 1}, []byte{0, 255}, []byte{0xf0}, 0, float32(1.0 / 255), float32(1.0 / 15)},
		// 255·0.5 = 127.5 and 15·0.5 = 7.5 are exact ties: round half up.
		{"exact half", []float32{0, 0.5, 1}, []byte{0, 128, 255}, []byte{0x80, 0x0f}, 0, float32(1.0 / 255), float32(1.0 / 15)},
		{"negative range", []float32{-2, -1, 0}, []byte{0, 128, 255}, []byte{0x80, 0x0f}, -2, float32(2.0 / 255), float32(2.0 / 15)},
		{"constant", []float32{3, 3, 3}, []byte{0, 0, 0}, []byte{0, 0}, 3, 0, 0},
		{"D=1", []float32{-7.5}, []byte{0}, []byte{0}, -7.5, 0, 0},
		{"empty", nil, []byte{}, []byte{}, 0, 0, 0},
		{"zeros of both signs", []float32{negZero, 0, negZero}, []byte{0, 0, 0}, []byte{0, 0}, 0, 0, 0},
		{"negative zero minimum", []float32{1, negZero, 0}, []byte{255, 0, 0}, []byte{0x0f, 0}, 0, float32(1.0 / 255), float32(1.0 / 15)},
		{"full float32 range", []float32{-maxF, 0, maxF}, []byte{0, 128, 255}, []byte{0x80, 0x0f}, -maxF,
			float32(2 * float64(maxF) / 255), float32(2 * float64(maxF) / 15)},
		{"subnormals", []float32{0, minSub, 2 * minSub}, []byte{0, 128, 255}, []byte{0x80, 0x0f}, 0, 0, 0},
		// 255·(x−1)/4 = 0, 63.75, 127.5, 191.25, 255; 15·(x−1)/4 = 0, 3.75, 7.5, 11.25, 15.
		{"odd dims", []float32{1, 2, 3, 4, 5}, []byte{0, 64, 128, 191, 255}, []byte{0x40, 0xb8, 0x0f}, 1, float32(4.0 / 255), float32(4.0 / 15)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c8 := make([]byte, CodeLen(8, len(tt.x)))
			o, s := Encode8(c8, tt.x)
			if !bytes.Equal(c8, tt.code8) || f32bits(o) != f32bits(tt.offset) || f32bits(s) != f32bits(tt.scale8) {
				t.Errorf("Encode8 = %v %v %v, want %v %v %v", c8, o, s, tt.code8, tt.offset, tt.scale8)
			}
			c4 := make([]byte, CodeLen(4, len(tt.x)))
			for i := range c4 {
				c4[i] = 0xff // Encode4 must overwrite, not OR into, the buffer
			}
			o, s = Encode4(c4, tt.x)
			if !bytes.Equal(c4, tt.code4) || f32bits(o) != f32bits(tt.offset) || f32bits(s) != f32bits(tt.scale4) {
				t.Errorf("Encode4 = %x %v %v, want %x %v %v", c4, o, s, tt.code4, tt.offset, tt.scale4)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	t.Run("formula", func(t *testing.T) {
		// 0.1 + 0.3·c in float64, rounded once to float32.
		code := []byte{0, 1, 2, 255}
		dst := make([]float32, 4)
		o, s := float32(0.1), float32(0.3)
		Decode8(dst, code, o, s)
		for i, c := range code {
			want := float32(float64(o) + float64(s)*float64(c))
			if f32bits(dst[i]) != f32bits(want) {
				t.Errorf("Decode8[%d] = %v, want %v", i, dst[i], want)
			}
		}
		// The float64 path differs from float32 arithmetic here, which is
		// why the ruling names it.
		if float32(o+s*2) == dst[2] && float32(o+s*255) == dst[3] && float32(o+s*1) == dst[1] {
			t.Log("float32 arithmetic happens to agree on these values")
		}
		dst4 := make([]float32, 3)
		Decode4(dst4, []byte{0x21, 0x0f}, o, s)
		for i, c := range []byte{1, 2, 15} {
			want := float32(float64(o) + float64(s)*float64(c))
			if f32bits(dst4[i]) != f32bits(want) {
				t.Errorf("Decode4[%d] = %v, want %v", i, dst4[i], want)
			}
		}
	})
	t.Run("double rounding defined by float64", func(t *testing.T) {
		// offset + scale·code is not a float64 here, so the float64 sum is
		// rounded twice; the ruling fixes that value, not the correctly
		// rounded one.
		o, s := float32(1), math.Float32frombits(0x33800001) // 2^-24·(1+2^-23)
		got := Reconstruct(float64(o), float64(s), 1)
		if want := float32(float64(o) + float64(s)); got != want {
			t.Fatalf("Reconstruct = %v, want %v", got, want)
		}
	})
	t.Run("saturates at MaxFloat32", func(t *testing.T) {
		// Found by search: the scale rounds up and offset + 15·scale exceeds
		// the float32 range; the plain formula would give +Inf.
		x := []float32{-1.3420874e+38, maxF}
		code := make([]byte, 1)
		o, s := Encode4(code, x)
		if raw := float32(float64(o) + 15*float64(s)); !math.IsInf(float64(raw), 1) {
			t.Fatalf("test vector no longer overflows: %v", raw)
		}
		dst := make([]float32, 2)
		Decode4(dst, code, o, s)
		if dst[1] != maxF || dst[0] != x[0] {
			t.Fatalf("Decode4 = %v, want [%v %v]", dst, x[0], maxF)
		}
	})
}

func TestFromFloat64(t *testing.T) {
	tests := []struct {
		in      float64
		want    float32
		wantErr error
	}{
		{1.5, 1.5, nil},
		{0.1, 0.1, nil},
		{math.Copysign(0, -1), negZero, nil},
		// 1 + 2^-24 is a tie between 1 and 1+2^-23: to even gives 1.
		{1 + 0x1p-24, 1, nil},
		{1 + 3*0x1p-24, 1 + 0x1p-22, nil},
		{math.MaxFloat32, maxF, nil},
		// Largest double that rounds to MaxFloat32 rather than +Inf.
		{math.Nextafter(0x1p128-0x1p103, 0), maxF, nil},
		{0x1p128 - 0x1p103, 0, ErrNotFinite},
		{-math.MaxFloat64, 0, ErrNotFinite},
		{math.Inf(1), 0, ErrNotFinite},
		{math.Inf(-1), 0, ErrNotFinite},
		{math.NaN(), 0, ErrNotFinite},
		{0x1p-150, 0, nil},                  // tie between 0 and the smallest subnormal: even is 0
		{0x1p-150 * 1.5, minSub, nil},       // above the tie
		{1e-300, 0, nil},                    // underflow is not an error
		{-0x1p-149 * 2.5, -2 * minSub, nil}, // tie to even on subnormals
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.in), func(t *testing.T) {
			got, err := FromFloat64(tt.in)
			if !errors.Is(err, tt.wantErr) || (err == nil && f32bits(got) != f32bits(tt.want)) {
				t.Fatalf("FromFloat64(%v) = %v, %v; want %v, %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	t.Run("values", func(t *testing.T) {
		x := []float32{3, 4}
		dst := make([]float32, 2)
		if err := Normalize(dst, x); err != nil || dst[0] != 0.6 || dst[1] != 0.8 {
			t.Fatalf("Normalize = %v, %v", dst, err)
		}
	})
	t.Run("float64 then one rounding", func(t *testing.T) {
		x := []float32{1, 2, 3, 1e-3, -7, maxF / 4, minSub}
		dst := make([]float32, len(x))
		if err := Normalize(dst, x); err != nil {
			t.Fatal(err)
		}
		var ss float64
		for _, v := range x {
			ss += float64(v) * float64(v)
		}
		n := math.Sqrt(ss)
		for i, v := range x {
			if want := float32(float64(v) / n); f32bits(dst[i]) != f32bits(want) {
				t.Errorf("dst[%d] = %v, want %v", i, dst[i], want)
			}
		}
	})
	t.Run("in place", func(t *testing.T) {
		x := []float32{0, -2, 0}
		if err := Normalize(x, x); err != nil || x[1] != -1 || x[0] != 0 {
			t.Fatalf("Normalize = %v, %v", x, err)
		}
	})
	t.Run("huge values do not overflow", func(t *testing.T) {
		x := []float32{maxF, maxF, maxF}
		if err := Normalize(x, x); err != nil || x[0] != float32(1/math.Sqrt(3)) {
			t.Fatalf("Normalize = %v, %v", x, err)
		}
	})
	t.Run("subnormal only", func(t *testing.T) {
		x := []float32{minSub, 0}
		if err := Normalize(x, x); err != nil || x[0] != 1 {
			t.Fatalf("Normalize = %v, %v", x, err)
		}
	})
	for _, tt := range []struct {
		name string
		x    []float32
		err  error
	}{
		{"zero", []float32{0, negZero}, ErrZeroNorm},
		{"empty", nil, ErrZeroNorm},
		{"NaN", []float32{1, float32(math.NaN())}, ErrNotFinite},
		{"Inf", []float32{float32(math.Inf(-1)), 1}, ErrNotFinite},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := Normalize(make([]float32, len(tt.x)), tt.x); !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
		})
	}
}
