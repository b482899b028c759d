//go:build !purego

package vecmath

import (
	"math/rand/v2"
	"testing"
)

// withImpls runs f once per kernel set this CPU supports, by switching the
// dispatch flags (tests in this package do not run in parallel).
func withImpls(t *testing.T, f func(t *testing.T)) {
	save512, save2 := useAVX512, useAVX2
	defer func() { useAVX512, useAVX2 = save512, save2 }()
	for _, c := range []struct {
		name       string
		avx512, a2 bool
		ok         bool
	}{
		{"avx512", true, save2, save512},
		{"avx2", false, true, save2},
		{"go", false, false, true},
	} {
		if !c.ok {
			t.Logf("%s not supported by this CPU", c.name)
			continue
		}
		useAVX512, useAVX2 = c.avx512, c.a2
		t.Run(c.name, f)
	}
}

// withImplsB is withImpls for benchmarks.
func withImplsB(b *testing.B, f func(b *testing.B)) {
	save512, save2 := useAVX512, useAVX2
	defer func() { useAVX512, useAVX2 = save512, save2 }()
	for _, c := range []struct {
		name       string
		avx512, a2 bool
		ok         bool
	}{
		{"avx512", true, save2, save512},
		{"avx2", false, true, save2},
		{"go", false, false, true},
	} {
		if !c.ok {
			continue
		}
		useAVX512, useAVX2 = c.avx512, c.a2
		b.Run(c.name, f)
	}
}

func BenchmarkDotSumsU8BatchPairs(b *testing.B) {
	if !useAVX512 {
		b.Skip("needs AVX-512")
	}
	defer func(p bool) { pairKernel = p }(pairKernel)
	for _, p := range []bool{true, false} {
		pairKernel = p
		b.Run(map[bool]string{true: "pairs", false: "single"}[p], benchDotSumsU8Batch)
	}
}

func BenchmarkDotSumsU4SplitBatchPairs(b *testing.B) {
	if !useAVX512 {
		b.Skip("needs AVX-512")
	}
	const d, n = 1536, 256
	r := rand.New(rand.NewPCG(1, 1))
	q, codes := randF32(r, d), randBytes(r, n*d/2)
	qs := make([]float32, d)
	SplitQueryU4(qs, q)
	dots, sums, sqs := make([]float32, n), make([]uint32, n), make([]uint32, n)
	defer func(p bool) { pairKernel = p }(pairKernel)
	for _, p := range []bool{true, false} {
		pairKernel = p
		b.Run(map[bool]string{true: "pairs", false: "single"}[p], func(b *testing.B) {
			b.SetBytes(n * d / 2)
			for b.Loop() {
				DotSumsU4SplitBatch(qs, d, codes, dots, sums, sqs)
			}
		})
	}
}

// TestBatchWidth checks that the AVX-512 batch kernels take the SIMD path
// at dimensions that are not whole blocks (the benchmark dimensions 784
// and 50 among them): the width they cover is the one-row kernels' prefix.
func TestBatchWidth(t *testing.T) {
	if Impl() != "avx512" {
		t.Skipf("batch kernels with a Go tail exist only for avx512; this CPU uses %s", Impl())
	}
	for _, c := range []struct{ d, u8, u4 int }{
		{1, 0, 0}, {15, 0, 0}, {16, 16, 0}, {50, 48, 0}, {129, 128, 64}, {255, 240, 64},
		{256, 256, 128}, {257, 256, 128}, {784, 784, 384}, {1001, 992, 448},
	} {
		if got := u8BatchWidth(c.d); got != c.u8 {
			t.Errorf("u8BatchWidth(%d) = %d, want %d", c.d, got, c.u8)
		}
		if got := u4BatchWidth(c.d); got != c.u4 {
			t.Errorf("u4BatchWidth(%d) = %d, want %d", c.d, got, c.u4)
		}
	}
}
