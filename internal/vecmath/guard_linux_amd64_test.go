//go:build !purego

package vecmath

import (
	"math"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"unsafe"
)

// guarded returns a byte slice of length n that ends exactly where an
// inaccessible page begins, so that any read past its end faults.
func guarded(t *testing.T, n int) []byte {
	t.Helper()
	page := syscall.Getpagesize()
	size := (n + page - 1) / page * page
	mem, err := syscall.Mmap(-1, 0, size+page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[size:], syscall.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	return mem[size-n : size : size]
}

// TestU4TailNoOverread runs the k-masked LVQ4 tail kernel on codes and a
// query that end at an inaccessible page: the masked loads must not touch
// it, and the results must equal those from ordinary memory bit for bit.
func TestU4TailNoOverread(t *testing.T) {
	if Impl() != "avx512" {
		t.Skipf("the masked tail kernel is used only with avx512; this CPU uses %s", Impl())
	}
	r := rand.New(rand.NewPCG(5, 5))
	for _, dim := range []int{2, 3, 31, 50, 51, 127, 200, 255, 784, 785} {
		const n = 5
		h := (dim + 1) / 2
		q := randF32(r, dim)
		qs := make([]float32, 2*h)
		SplitQueryU4(qs, q)
		codes := randBytes(r, n*h)
		gq := unsafe.Slice((*float32)(unsafe.Pointer(&guarded(t, 8*h)[0])), 2*h)
		copy(gq, qs)
		gc := guarded(t, n*h)
		copy(gc, codes)
		dots, sums, sqs := make([]float32, n), make([]uint32, n), make([]uint32, n)
		DotSumsU4SplitBatch(gq, dim, gc, dots, sums, sqs)
		for i := 0; i < n; i++ {
			d, s, sq := DotSumsU4Split(qs, codes[i*h:(i+1)*h], dim)
			if math.Float32bits(d) != math.Float32bits(dots[i]) || s != sums[i] || sq != sqs[i] {
				t.Fatalf("D=%d row %d: guarded batch %v %d %d, one-row %v %d %d", dim, i, dots[i], sums[i], sqs[i], d, s, sq)
			}
			gd, gs, gsq := DotSumsU4Split(gq, gc[i*h:(i+1)*h], dim)
			if math.Float32bits(d) != math.Float32bits(gd) || s != gs || sq != gsq {
				t.Fatalf("D=%d row %d: guarded one-row %v %d %d, want %v %d %d", dim, i, gd, gs, gsq, d, s, sq)
			}
		}
	}
}

// TestLVQ8DistsNoOverread runs LVQ8Terms.Dists on rows whose values end at
// an inaccessible page: the kernel's masked tail must not read or write
// past them, and the results must equal Dist's bit for bit.
func TestLVQ8DistsNoOverread(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	for _, n := range []int{1, 5, 15, 16, 17, 33, 47} {
		f32 := func() []float32 {
			return unsafe.Slice((*float32)(unsafe.Pointer(&guarded(t, 4*n)[0])), n)
		}
		dots, offs, scs := f32(), f32(), f32()
		base := unsafe.Slice((*float64)(unsafe.Pointer(&guarded(t, 8*n)[0])), n)
		q := LVQ8Terms{Norm2: 1, SumQ2: r.NormFloat64(), Mul: 0.5}
		want := make([]float32, n)
		for i := range n {
			dots[i] = float32(r.NormFloat64() * 50)
			offs[i] = float32(r.NormFloat64() * 0.1)
			scs[i] = float32(r.Float64() * 0.01)
			base[i] = 0.5 + r.Float64()
			want[i] = q.Dist(offs[i], scs[i], base[i], dots[i])
		}
		idx := q.Dists(dots, offs, scs, base, want[n/2], nil)
		j := 0
		for i := range n {
			if math.Float32bits(dots[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d row %d: %v, want %v", n, i, dots[i], want[i])
			}
			if want[i] <= want[n/2] {
				if j >= len(idx) || idx[j] != int32(i) {
					t.Fatalf("n=%d: idx %v lacks row %d", n, idx, i)
				}
				j++
			}
		}
		if j != len(idx) {
			t.Fatalf("n=%d: idx %v has extra rows", n, idx)
		}
	}
}

// TestL2SqF64ViewsNoOverread runs L2SqF64Views on a query and views that
// end at an inaccessible page: it reads exactly len(q) values of each.
func TestL2SqF64ViewsNoOverread(t *testing.T) {
	r := rand.New(rand.NewPCG(64, 3))
	for _, d := range []int{1, 2, 3, 4, 5, 7, 8, 50, 51, 53} {
		q := unsafe.Slice((*float32)(unsafe.Pointer(&guarded(t, 4*d)[0])), d)
		v := unsafe.Slice((*float32)(unsafe.Pointer(&guarded(t, 4*d)[0])), d)
		for i := range d {
			q[i], v[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		out := make([]float64, 2)
		L2SqF64Views(q, [][]float32{v, v}, out)
		if want := L2SqF64(q, v); out[0] != want || out[1] != want {
			t.Fatalf("D=%d: guarded %v, want %v", d, out, want)
		}
	}
}

// TestU8QuerySetNoOverread sets a U8Query from queries that end at an
// inaccessible page: the masked loads of the last n mod 16 values must not
// touch it, and the result must equal that from ordinary memory.
func TestU8QuerySetNoOverread(t *testing.T) {
	if Impl() != "avx512" {
		t.Skipf("the masked loads are used only with avx512; this CPU uses %s", Impl())
	}
	r := rand.New(rand.NewPCG(12, 12))
	for _, dim := range []int{1, 2, 15, 16, 17, 50, 127, 256} {
		q := randF32(r, dim)
		gq := unsafe.Slice((*float32)(unsafe.Pointer(&guarded(t, 4*dim)[0])), dim)
		copy(gq, q)
		var u, g U8Query
		u.Set(q)
		g.Set(gq)
		if u.S != g.S || !slices.Equal(u.hl, g.hl) {
			t.Fatalf("D=%d: guarded query quantized to S %v %v, want S %v %v", dim, g.S, g.hl, u.S, u.hl)
		}
	}
}
