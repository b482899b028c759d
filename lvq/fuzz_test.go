package lvq

import (
	"encoding/binary"
	"math"
	"testing"
)

// floatsFromBytes reads little-endian float32s, replacing NaN and ±Inf (which
// callers validate away before encoding) by finite values so that no input
// is wasted.
func floatsFromBytes(data []byte) []float32 {
	n := min(len(data)/4, 512)
	x := make([]float32, n)
	for i := range x {
		b := binary.LittleEndian.Uint32(data[4*i:])
		f := math.Float32frombits(b)
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			f = math.Float32frombits(b &^ (1 << 30)) // clear the top exponent bit
		}
		x[i] = f
	}
	return x
}

func bytesFromFloats(x ...float32) []byte {
	b := make([]byte, 4*len(x))
	for i, f := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func addSeeds(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytesFromFloats(0, 1))
	f.Add(bytesFromFloats(0, 0.5, 1))
	f.Add(bytesFromFloats(-2, -1, 0, 1, 2))
	f.Add(bytesFromFloats(3, 3, 3))
	f.Add(bytesFromFloats(negZero, 0, 1))
	f.Add(bytesFromFloats(-maxF, 0, maxF))
	f.Add(bytesFromFloats(-1.3420874e+38, maxF))
	f.Add(bytesFromFloats(minSub, 0, 2*minSub))
	f.Add(bytesFromFloats(-maxF, minSub, maxF/3))
	f.Add(bytesFromFloats(nearTie(0, 1, 100, 255, 0), 0, 1, nearTie(0, 1, 7, 15, 1)))
}

// FuzzEncode8 checks Encode8 against the rational reference (codes, offset,
// scale bit for bit) and Decode8 for finite reconstructions within bounds.
func FuzzEncode8(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		x := floatsFromBytes(data)
		code := make([]byte, CodeLen(8, len(x)))
		o, s := Encode8(code, x)
		want, wo, ws := refEncode(x, MaxCode8)
		if string(code) != string(want) || f32bits(o) != f32bits(wo) || f32bits(s) != f32bits(ws) {
			t.Fatalf("x=%v: got %v %v %v want %v %v %v", x, code, o, s, want, wo, ws)
		}
		checkDecodeBounds(t, x, code, o, s, MaxCode8)
		dst := make([]float32, len(x))
		Decode8(dst, code, o, s)
		for i, c := range code {
			if f32bits(dst[i]) != f32bits(Reconstruct(float64(o), float64(s), c)) {
				t.Fatalf("Decode8[%d] differs from Reconstruct", i)
			}
		}
	})
}

// FuzzEncode4 is FuzzEncode8 for LVQ4, and also checks the code length and
// that an unused final high nibble is zero.
func FuzzEncode4(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		x := floatsFromBytes(data)
		code := make([]byte, CodeLen(4, len(x)))
		if len(code) != (len(x)+1)/2 {
			t.Fatalf("CodeLen(4, %d) = %d", len(x), len(code))
		}
		for i := range code {
			code[i] = 0xa5
		}
		o, s := Encode4(code, x)
		if len(x)%2 == 1 && code[len(code)-1]>>4 != 0 {
			t.Fatalf("unused nibble set: %x", code[len(code)-1])
		}
		want, wo, ws := refEncode(x, MaxCode4)
		got := unpack4(code, len(x))
		if string(got) != string(want) || f32bits(o) != f32bits(wo) || f32bits(s) != f32bits(ws) {
			t.Fatalf("x=%v: got %v %v %v want %v %v %v", x, got, o, s, want, wo, ws)
		}
		checkDecodeBounds(t, x, got, o, s, MaxCode4)
		dst := make([]float32, len(x))
		Decode4(dst, code, o, s)
		for i, c := range got {
			if f32bits(dst[i]) != f32bits(Reconstruct(float64(o), float64(s), c)) {
				t.Fatalf("Decode4[%d] differs from Reconstruct", i)
			}
		}
	})
}
