package vecmath

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
)

// Benchmarks run every kernel set the CPU supports, so that one run shows
// the ratio of assembly to portable Go, e.g.
//
//	go test -run '^$' -bench 'L2Sq/|DotU8/' -count 6 ./internal/vecmath
var benchDims = []int{128, 768, 1536}

func benchImpls(b *testing.B, f func(b *testing.B)) {
	withImplsB(b, f)
}

func randF32(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func randBytes(r *rand.Rand, n int) []byte {
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(r.Uint32())
	}
	return v
}

var sinkF float32
var sinkU uint32

func BenchmarkL2Sq(b *testing.B) {
	benchImpls(b, func(b *testing.B) {
		for _, d := range benchDims {
			r := rand.New(rand.NewPCG(1, 1))
			x, y := randF32(r, d), randF32(r, d)
			b.Run(fmt.Sprintf("D=%d", d), func(b *testing.B) {
				b.SetBytes(int64(8 * d))
				for b.Loop() {
					sinkF += L2Sq(x, y)
				}
			})
		}
	})
}

func BenchmarkDot(b *testing.B) {
	benchImpls(b, func(b *testing.B) {
		for _, d := range benchDims {
			r := rand.New(rand.NewPCG(1, 1))
			x, y := randF32(r, d), randF32(r, d)
			b.Run(fmt.Sprintf("D=%d", d), func(b *testing.B) {
				b.SetBytes(int64(8 * d))
				for b.Loop() {
					sinkF += Dot(x, y)
				}
			})
		}
	})
}

func BenchmarkDotU8(b *testing.B) {
	benchImpls(b, func(b *testing.B) {
		for _, d := range benchDims {
			r := rand.New(rand.NewPCG(1, 1))
			q, c := randF32(r, d), randBytes(r, d)
			b.Run(fmt.Sprintf("D=%d", d), func(b *testing.B) {
				b.SetBytes(int64(d))
				for b.Loop() {
					sinkF += DotU8(q, c)
				}
			})
		}
	})
}

func BenchmarkDotSumsU8(b *testing.B) {
	benchImpls(b, func(b *testing.B) {
		for _, d := range benchDims {
			r := rand.New(rand.NewPCG(1, 1))
			q, c := randF32(r, d), randBytes(r, d)
			b.Run(fmt.Sprintf("D=%d", d), func(b *testing.B) {
				b.SetBytes(int64(d))
				for b.Loop() {
					f, s, sq := DotSumsU8(q, c)
					sinkF += f
					sinkU += s + sq
				}
			})
		}
	})
}

func BenchmarkSumU8(b *testing.B) {
	benchImpls(b, func(b *testing.B) {
		c := randBytes(rand.New(rand.NewPCG(1, 1)), 768)
		b.SetBytes(768)
		for b.Loop() {
			s, sq := SumU8(c)
			sinkU += s + sq
		}
	})
}

// streamBytes is the size of the buffers the streaming benchmarks scan:
// larger than the last-level cache so that they measure memory bandwidth.
// PARQDB_BENCH_LARGE=1 raises it from 64 MiB to 512 MiB.
func streamBytes() int {
	if os.Getenv("PARQDB_BENCH_LARGE") != "" {
		return 512 << 20
	}
	return 64 << 20
}

// BenchmarkStream compares scanning a large buffer of codes or vectors with
// a plain memory read of the same size (bytes.IndexByte over zeros, which
// the runtime implements with wide vector loads). All sub-benchmarks report
// MB/s of input, so their ratio to read is the share of single-core memory
// bandwidth the kernel reaches:
//
//	go test -run '^$' -bench Stream -benchtime 20x -count 6 ./internal/vecmath
func BenchmarkStream(b *testing.B) {
	const d = 768
	size := streamBytes()
	n := size / d
	r := rand.New(rand.NewPCG(1, 1))
	codes := randBytes(r, n*d)
	q := randF32(r, d)
	out := make([]float32, n)

	b.Run("read", func(b *testing.B) {
		zero := make([]byte, n*d)
		for i := range zero {
			zero[i] = 0 // fault in real pages: untouched ones all map the shared zero page
		}
		b.SetBytes(int64(len(zero)))
		for b.Loop() {
			if bytes.IndexByte(zero, 1) >= 0 {
				b.Fatal("unexpected byte")
			}
		}
	})
	benchImpls(b, func(b *testing.B) {
		b.Run("DotU8Batch", func(b *testing.B) {
			b.SetBytes(int64(len(codes)))
			for b.Loop() {
				DotU8Batch(q, codes, d, out)
			}
		})
		b.Run("DotSumsU8", func(b *testing.B) {
			b.SetBytes(int64(len(codes)))
			for b.Loop() {
				for i := 0; i < n; i++ {
					f, s, sq := DotSumsU8(q, codes[i*d:(i+1)*d])
					out[i] = f + float32(s+sq)
				}
			}
		})
		b.Run("L2SqBatch", func(b *testing.B) {
			rows := make([]float32, len(codes)/4)
			for i := range rows {
				rows[i] = float32(codes[i])
			}
			nr := len(rows) / d
			b.SetBytes(int64(4 * nr * d))
			for b.Loop() {
				L2SqBatch(q, rows[:nr*d], d, out[:nr])
			}
		})
	})
}

// BenchmarkDotSumsU8Batch scores 256 rows held in cache (the LVQ8 scan
// kernel without the memory bottleneck).
func BenchmarkDotSumsU8Batch(b *testing.B) {
	benchImpls(b, benchDotSumsU8Batch)
}

func benchDotSumsU8Batch(b *testing.B) {
	const d, n = 768, 256
	r := rand.New(rand.NewPCG(1, 1))
	q, codes := randF32(r, d), randBytes(r, n*d)
	dots, sums, sqs := make([]float32, n), make([]uint32, n), make([]uint32, n)
	b.SetBytes(n * d)
	for b.Loop() {
		DotSumsU8Batch(q, codes, dots, sums, sqs)
	}
}
