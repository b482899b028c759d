//go:build !purego

package vecmath

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// smallestBoth runs the kernel and the portable code on d and fails on any
// difference: decided or not, M, the candidates, their ranks and Kth (up
// to the sign of a zero).
func smallestBoth(t *testing.T, d []float32, k int) {
	t.Helper()
	var a, g Smallest
	okA := SmallestK(d, k, &a)
	okG := smallestKGeneric(d, k, &g)
	if okA != okG {
		t.Fatalf("n %d k %d: kernel %v, portable %v (%v)", len(d), k, okA, okG, d)
	}
	if !okA {
		return
	}
	if a.M != g.M || !slices.Equal(a.Idx[:a.M], g.Idx[:g.M]) || !slices.Equal(a.Rank[:a.M], g.Rank[:g.M]) {
		t.Fatalf("n %d k %d: kernel M %d %v %v, portable M %d %v %v", len(d), k, a.M, a.Idx[:a.M], a.Rank[:a.M], g.M, g.Idx[:g.M], g.Rank[:g.M])
	}
	if a.Kth != g.Kth {
		t.Fatalf("n %d k %d: kernel Kth %v, portable %v", len(d), k, a.Kth, g.Kth)
	}
}

func TestSmallestKKernel(t *testing.T) {
	if !useAVX512 {
		t.Skip("needs AVX-512")
	}
	r := rand.New(rand.NewPCG(5, 9))
	for n := 1; n <= 300; n++ {
		for trial := range 8 {
			d := smallestInput(r, n, []int{2, 9, 1 << 20, 1 << 20}[trial%4], []int{0, 50}[trial/4])
			for _, k := range []int{1, 5, 16, 17, 32, n} {
				if k <= n && k <= SmallestMaxK {
					smallestBoth(t, d, k)
				}
			}
		}
	}
}

// FuzzSmallestK compares the kernel with the portable code: the input's
// bytes read as float32 values (every NaN, infinity and zero reachable),
// k from the first byte.
func FuzzSmallestK(f *testing.F) {
	if !useAVX512 {
		f.Skip("needs AVX-512")
	}
	f.Add(byte(9), make([]byte, 400))
	seed := make([]byte, 4*100)
	for i := range 100 {
		binary.LittleEndian.PutUint32(seed[4*i:], math.Float32bits(float32(i*37%100)))
	}
	f.Add(byte(10), seed)
	f.Add(byte(31), seed[:4*45])
	binary.LittleEndian.PutUint32(seed[4*50:], 0x7fc00000)
	f.Add(byte(3), seed)
	f.Fuzz(func(t *testing.T, kb byte, b []byte) {
		d := make([]float32, len(b)/4)
		for i := range d {
			d[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		if len(d) == 0 {
			return
		}
		k := 1 + int(kb)%min(len(d), SmallestMaxK)
		smallestBoth(t, d, k)
	})
}
