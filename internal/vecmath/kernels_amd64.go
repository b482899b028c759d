//go:build !purego

package vecmath

import "unsafe"

// Assembly kernels in kernels_amd64.s. n must be a multiple of the kernel's
// block size (see there); the pointers must cover n elements (n/2 bytes for
// 4-bit codes).

//go:noescape
func l2SqAVX512(a, b *float32, n int) float32

//go:noescape
func dotAVX512(a, b *float32, n int) float32

//go:noescape
func dotU8AVX512(q *float32, code *byte, n int) float32

//go:noescape
func dotU4AVX512(q *float32, code *byte, n int) float32

//go:noescape
func dotSumsU8AVX512(q *float32, code *byte, n int) (dot float32, sum, sumSq uint32)

//go:noescape
func dotSumsU4AVX512(q *float32, code *byte, n int) (dot float32, sum, sumSq uint32)

//go:noescape
func l2SqAVX2(a, b *float32, n int) float32

//go:noescape
func dotAVX2(a, b *float32, n int) float32

//go:noescape
func dotU8AVX2(q *float32, code *byte, n int) float32

//go:noescape
func dotU4AVX2(q *float32, code *byte, n int) float32

//go:noescape
func dotSumsU8AVX2(q *float32, code *byte, n int) (dot float32, sum, sumSq uint32)

//go:noescape
func dotSumsU4AVX2(q *float32, code *byte, n int) (dot float32, sum, sumSq uint32)

//go:noescape
func dotSumsU8BatchAVX512(q *float32, codes *byte, dim, n int, dots *float32, sums, sumSqs *uint32)

//go:noescape
func dotSumsU4SplitAVX512(qs *float32, h int, code *byte, m int) (dot float32, sum, sumSq uint32)

//go:noescape
func dotSumsU4SplitBatchAVX512(qs *float32, h int, codes *byte, n int, dots *float32, sums, sumSqs *uint32, m int)

//go:noescape
func sumU8AVX512(code *byte, n int) (sum, sumSq uint32)

//go:noescape
func dotSumsU8Batch2AVX512(q *float32, codes *byte, dim, n int, dots *float32, sums, sumSqs *uint32)

//go:noescape
func dotSumsU4SplitBatch2AVX512(qs *float32, h int, codes *byte, n int, dots *float32, sums, sumSqs *uint32, m int)

//go:noescape
func dotSumsU4SplitTailAVX512(qs *float32, h int, codes *byte, n int, dots *float32, sums, sumSqs *uint32, m, r int)

// Row-batch forms of l2SqAVX512 and dotU8AVX512: out[i] for the n rows of
// d values (d a multiple of 16) starting at rows/codes, bit-identical to a
// call per row.

//go:noescape
func l2SqBatchAVX512(q, rows *float32, d, n int, out *float32)

//go:noescape
func dotU8BatchAVX512(q *float32, codes *byte, d, n int, out *float32)

// l2SqViewsAVX512 is l2SqBatchAVX512 over scattered rows: views points to
// n slice headers ([]float32), each row's first d values are read.
//
//go:noescape
func l2SqViewsAVX512(q *float32, views unsafe.Pointer, d, n int, out *float32)

// lvq8DistsAVX512 is LVQ8Terms.Dists over n rows (n a multiple of 16): it
// overwrites dots with the distances and writes the numbers of the rows
// within thr to idx, storing 16 values per block of rows (idx must hold
// the count returned plus 16), and returns how many it wrote.
//
//go:noescape
func lvq8DistsAVX512(dots, offs, scs *float32, base *float64, n int, norm2, sumq2 float64, mul, thr float32, idx *int32) int
