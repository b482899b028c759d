package keyenc

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

func TestOrderAndRoundTrip(t *testing.T) {
	ints := []int64{math.MinInt64, -1 << 40, -2, -1, 0, 1, 2, 1 << 40, math.MaxInt64}
	for i := 1; i < len(ints); i++ {
		a, b := AppendInt64(nil, ints[i-1]), AppendInt64(nil, ints[i])
		if bytes.Compare(a, b) >= 0 {
			t.Fatalf("%d !< %d in encoding", ints[i-1], ints[i])
		}
		if v, n, ok := Int64(b); !ok || n != 8 || v != ints[i] {
			t.Fatalf("Int64 round trip of %d: %d %d %v", ints[i], v, n, ok)
		}
		a32, b32 := AppendInt32(nil, int32(max(min(ints[i-1], math.MaxInt32), math.MinInt32))), AppendInt32(nil, int32(max(min(ints[i], math.MaxInt32), math.MinInt32)))
		if bytes.Compare(a32, b32) > 0 {
			t.Fatal("int32 order")
		}
	}
	strs := [][]byte{{}, {0}, {0, 0}, {0, 1}, {0, 0xFF}, {1}, {1, 0}, {0xFF}, {0xFF, 0}}
	for i := 1; i < len(strs); i++ {
		a, b := AppendBytes(nil, strs[i-1]), AppendBytes(nil, strs[i])
		if bytes.Compare(a, b) >= 0 {
			t.Fatalf("%x !< %x in encoding (%x, %x)", strs[i-1], strs[i], a, b)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 10000; i++ {
		b := make([]byte, rng.IntN(8))
		for j := range b {
			b[j] = []byte{0, 1, 0xFF, byte(rng.IntN(256))}[rng.IntN(4)]
		}
		next := int32(rng.Uint32())
		enc := AppendInt32(AppendBytes(nil, b), next)
		got, n, ok := Bytes(enc)
		if !ok || !bytes.Equal(got, b) {
			t.Fatalf("Bytes(%x) = %x, %v; want %x", enc, got, ok, b)
		}
		if v, _, ok := Int32(enc[n:]); !ok || v != next {
			t.Fatalf("field after %x: %d %v, want %d", b, v, ok, next)
		}
	}
	for _, bad := range [][]byte{{}, {'a'}, {'a', 0}, {'a', 0, 2}, {0, 0xFF}} {
		if _, _, ok := Bytes(bad); ok {
			t.Fatalf("Bytes accepted %x", bad)
		}
	}
	if _, _, ok := Bool([]byte{2}); ok {
		t.Fatal("Bool accepted 2")
	}
}

func FuzzBytes(f *testing.F) {
	f.Add([]byte("abc"))
	f.Add([]byte{0, 0xFF, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		enc := AppendBytes(nil, b)
		got, n, ok := Bytes(enc)
		if !ok || n != len(enc) || !bytes.Equal(got, b) {
			t.Fatalf("round trip of %x: %x %d %v", b, got, n, ok)
		}
		Bytes(b) // must not panic on arbitrary input
	})
}
