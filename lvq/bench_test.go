package lvq

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/parqdb/parqdb/internal/vecmath"
)

func benchVec(r *rand.Rand, d int) []float32 {
	x := make([]float32, d)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

var sinkF float32

func BenchmarkEncode8(b *testing.B) {
	for _, d := range []int{128, 768} {
		x := benchVec(rand.New(rand.NewPCG(1, 1)), d)
		code := make([]byte, d)
		b.Run(fmt.Sprintf("D=%d", d), func(b *testing.B) {
			b.SetBytes(int64(4 * d))
			for b.Loop() {
				_, s := Encode8(code, x)
				sinkF += s
			}
		})
	}
}

func BenchmarkEncode4(b *testing.B) {
	for _, d := range []int{128, 768} {
		x := benchVec(rand.New(rand.NewPCG(1, 1)), d)
		code := make([]byte, CodeLen(4, d))
		b.Run(fmt.Sprintf("D=%d", d), func(b *testing.B) {
			b.SetBytes(int64(4 * d))
			for b.Loop() {
				_, s := Encode4(code, x)
				sinkF += s
			}
		})
	}
}

// BenchmarkEncode8Ties encodes small-integer vectors (as in SIFT-like data),
// where many codes are exact half-way cases decided by the exact path.
func BenchmarkEncode8Ties(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const d = 128
	x := make([]float32, d)
	for i := range x {
		x[i] = float32(r.IntN(151))
	}
	x[0], x[1] = 0, 150 // 255·x/150: x ≡ 5 (mod 10) is a tie
	code := make([]byte, d)
	b.SetBytes(4 * d)
	for b.Loop() {
		_, s := Encode8(code, x)
		sinkF += s
	}
}

func BenchmarkDecode8(b *testing.B) {
	const d = 768
	x := benchVec(rand.New(rand.NewPCG(1, 1)), d)
	code := make([]byte, d)
	o, s := Encode8(code, x)
	dst := make([]float32, d)
	b.SetBytes(d)
	for b.Loop() {
		Decode8(dst, code, o, s)
	}
}

func BenchmarkNormalize(b *testing.B) {
	const d = 768
	x := benchVec(rand.New(rand.NewPCG(1, 1)), d)
	dst := make([]float32, d)
	b.SetBytes(4 * d)
	for b.Loop() {
		if err := Normalize(dst, x); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkQueryL2Sq4(b *testing.B) {
	for _, d := range []int{128, 768} {
		r := rand.New(rand.NewPCG(1, 1))
		q := NewQuery(benchVec(r, d))
		code := make([]byte, CodeLen(4, d))
		o, s := Encode4(code, benchVec(r, d))
		b.Run(fmt.Sprintf("D=%d", d), func(b *testing.B) {
			b.SetBytes(int64(len(code)))
			for b.Loop() {
				sinkF += q.L2Sq4(code, o, s)
			}
		})
	}
}

// BenchmarkStream scans a codes buffer larger than the last-level cache
// with L2Sq8Batch / L2Sq4Batch and, as the baseline, reads the same number
// of bytes with bytes.IndexByte (wide vector loads). MB/s counts code bytes
// plus the 8 bytes of offset and scale per row, so ratio to "read" is the
// share of single-core memory bandwidth reached. PARQDB_BENCH_LARGE=1 uses
// 512 MiB instead of 64 MiB.
//
//	go test -run '^$' -bench Stream -benchtime 20x -count 6 ./lvq
func BenchmarkStream(b *testing.B) {
	const d = 768
	size := 64 << 20
	if os.Getenv("PARQDB_BENCH_LARGE") != "" {
		size = 512 << 20
	}
	n := size / d
	r := rand.New(rand.NewPCG(1, 1))
	codes := make([]byte, n*d)
	for i := range codes {
		codes[i] = byte(r.Uint32())
	}
	offsets, scales := make([]float32, n), make([]float32, n)
	for i := range offsets {
		offsets[i], scales[i] = float32(r.NormFloat64()), r.Float32()/100
	}
	out := make([]float32, n)
	q := NewQuery(benchVec(r, d))
	b.Run("read", func(b *testing.B) {
		zero := make([]byte, n*(d+8))
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
	b.Run("L2Sq8Batch", func(b *testing.B) {
		b.SetBytes(int64(n * (d + 8)))
		for b.Loop() {
			q.L2Sq8Batch(codes, offsets, scales, out)
		}
	})
	b.Run("L2Sq4Batch", func(b *testing.B) {
		q4 := NewQuery(benchVec(r, 2*d))
		b.SetBytes(int64(n * (d + 8)))
		for b.Loop() {
			q4.L2Sq4Batch(codes, offsets, scales, out)
		}
	})
}

// BenchmarkStreamRatio alternates, within every iteration, plain reads of a
// large buffer and one LVQ scan of a codes buffer of the same size, and
// reports the median per-iteration ratio of scan throughput to read
// throughput (ratio) besides both rates in GB/s. The read is the faster of
// bytes.IndexByte (the runtime's vector memchr) and vecmath.SumU8 (one
// 64-byte load plus two cheap ops per 64 bytes with AVX-512). Pairing the
// passes makes the ratio robust on a shared, noisy machine.
//
//	go test -run '^$' -bench StreamRatio -benchtime 20x ./lvq
func BenchmarkStreamRatio(b *testing.B) {
	const d = 768
	size := 64 << 20
	if os.Getenv("PARQDB_BENCH_LARGE") != "" {
		size = 512 << 20
	}
	n := size / d
	r := rand.New(rand.NewPCG(2, 2))
	codes := make([]byte, n*d)
	for i := range codes {
		codes[i] = byte(r.Uint32())
	}
	zero := make([]byte, n*(d+8))
	for i := range zero {
		zero[i] = 0
	}
	offsets, scales := make([]float32, n), make([]float32, n)
	for i := range offsets {
		offsets[i], scales[i] = float32(r.NormFloat64()), r.Float32()/100
	}
	out := make([]float32, n)
	// bits 8 and 4 run the fused code-domain distance (q·c, Σc, Σc² in one
	// pass); "8dot" runs the search path's LVQ8 scan, which reads Σc and
	// Σc² precomputed when a list is cached and streams only q·c
	// (vecmath.DotU8Batch, query/search.go).
	for _, bits := range []string{"8", "4", "8dot"} {
		b.Run("LVQ"+bits, func(b *testing.B) {
			dim := d
			if bits == "4" {
				dim = 2 * d
			}
			qv := benchVec(r, dim)
			q := NewQuery(qv)
			var ratios []float64
			var readNs, scanNs time.Duration
			bytesPerPass := float64(n * (d + 8))
			for b.Loop() {
				t0 := time.Now()
				if bytes.IndexByte(zero, 1) >= 0 {
					b.Fatal("unexpected byte")
				}
				t1 := time.Now()
				if s, _ := vecmath.SumU8(zero); s != 0 {
					b.Fatal("unexpected sum")
				}
				t2 := time.Now()
				switch bits {
				case "8":
					q.L2Sq8Batch(codes, offsets, scales, out)
				case "4":
					q.L2Sq4Batch(codes, offsets, scales, out)
				default:
					vecmath.DotU8Batch(qv, codes, d, out)
				}
				scan := time.Since(t2)
				read := min(t1.Sub(t0), t2.Sub(t1))
				readNs += read
				scanNs += scan
				ratios = append(ratios, float64(read)/float64(scan))
			}
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "ratio")
			b.ReportMetric(bytesPerPass*float64(len(ratios))/float64(readNs), "read-GB/s")
			b.ReportMetric(bytesPerPass*float64(len(ratios))/float64(scanNs), "scan-GB/s")
		})
	}
}

// BenchmarkQueryBatch scans one list-sized group of 624 rows with
// L2Sq8Batch and L2Sq4Batch at the benchmark data sets' dimensions, which
// are not whole kernel blocks: 784 (Fashion-MNIST) and 50 (GloVe).
//
//	go test -run '^$' -bench QueryBatch -count 6 ./lvq
func BenchmarkQueryBatch(b *testing.B) {
	const n = 624
	for _, d := range []int{784, 50} {
		r := rand.New(rand.NewPCG(1, uint64(d)))
		q := NewQuery(benchVec(r, d))
		offsets, scales, out := make([]float32, n), make([]float32, n), make([]float32, n)
		codes8 := make([]byte, n*CodeLen(8, d))
		codes4 := make([]byte, n*CodeLen(4, d))
		for i := 0; i < n; i++ {
			x := benchVec(r, d)
			offsets[i], scales[i] = Encode8(codes8[i*d:(i+1)*d], x)
			w := CodeLen(4, d)
			Encode4(codes4[i*w:(i+1)*w], x)
		}
		b.Run(fmt.Sprintf("L2Sq8Batch/D=%d", d), func(b *testing.B) {
			b.SetBytes(int64(len(codes8)))
			for b.Loop() {
				q.L2Sq8Batch(codes8, offsets, scales, out)
			}
		})
		b.Run(fmt.Sprintf("L2Sq4Batch/D=%d", d), func(b *testing.B) {
			b.SetBytes(int64(len(codes4)))
			for b.Loop() {
				q.L2Sq4Batch(codes4, offsets, scales, out)
			}
		})
	}
}
