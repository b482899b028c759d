package source

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/parqdb/parqdb/lvq"
)

// TestConvertMatchesLVQ pins the local conversion and normalisation to the
// lvq package's (clarifications 4 and 5), so both produce identical bits.
func TestConvertMatchesLVQ(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for range 500 {
		d := 1 + r.IntN(100)
		x := make([]float32, d)
		for i := range x {
			f64 := r.NormFloat64() * math.Pow(10, float64(r.IntN(60)-30))
			f, err := lvq.FromFloat64(f64)
			if err != nil {
				t.Fatal(err)
			}
			if f != float32(f64) {
				t.Fatalf("FromFloat64(%v) = %v, local %v", f64, f, float32(f64))
			}
			x[i] = f
		}
		want := make([]float32, d)
		if err := lvq.Normalize(want, x); err != nil {
			t.Fatal(err)
		}
		got := append([]float32(nil), x...)
		if _, rule := checkVector(got, true); rule != nil {
			t.Fatal(rule)
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("element %d: %v, lvq %v", i, got[i], want[i])
			}
		}
	}
}
