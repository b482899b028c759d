// Package hugepage allocates large float32 slices whose memory the kernel
// may back with transparent huge pages (2 MiB), so that a scan streaming
// through them takes a TLB miss per 2 MiB instead of per 4 KiB: the
// source encoding's vector store (docs/benchmarks.md, "Huge pages").
//
// The memory is ordinary Go heap memory, kept alive by the returned
// slice and freed by the garbage collector as usual; only a hint is given
// to the kernel (madvise MADV_HUGEPAGE on Linux), which it may ignore
// (transparent huge pages set to "never", or no 2 MiB page free).
package hugepage

import "unsafe"

// Size is the huge page size the allocations are aligned to.
const Size = 2 << 20

// MinBytes is the smallest allocation that is aligned and advised; a
// smaller one is a plain make.
const MinBytes = 2 * Size

// Float32s returns a zeroed slice of n float32 values (length and capacity
// n). When it holds at least MinBytes, it starts on a Size boundary and
// the whole huge pages within it are advised for huge pages. It panics if
// n < 0.
func Float32s(n int) []float32 {
	if 4*n < MinBytes {
		return make([]float32, n)
	}
	buf := make([]float32, n+Size/4)
	off := alignOffset(buf)
	s := buf[off : off+n : off+n]
	advise(s)
	return s
}

// alignOffset returns the index of buf's first value on a Size boundary.
func alignOffset(buf []float32) int {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	return int((p+Size-1)&^(Size-1)-p) / 4
}
