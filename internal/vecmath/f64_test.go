package vecmath

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestL2SqF64Order: L2SqF64 sums in its documented order (four partial
// sums by dimension mod 4, the tail into the first, then pairwise),
// written out here independently, and is within float64 rounding of the
// exact sum.
func TestL2SqF64Order(t *testing.T) {
	r := rand.New(rand.NewPCG(64, 1))
	for d := 0; d <= 70; d++ {
		a, b := make([]float32, d), make([]float32, d+r.IntN(3))
		for i := range a {
			a[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3)))
		}
		for i := range b {
			b[i] = float32(r.NormFloat64())
		}
		var s [4]float64
		m := d &^ 3
		for i := range m {
			x := float64(a[i]) - float64(b[i])
			s[i%4] += x * x
		}
		for i := m; i < d; i++ {
			x := float64(a[i]) - float64(b[i])
			s[0] += x * x
		}
		want := (s[0] + s[1]) + (s[2] + s[3])
		got := L2SqF64(a, b)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("D=%d: L2SqF64 %v, in its order %v", d, got, want)
		}
		exact := new(big.Float).SetPrec(512)
		for i := range a {
			x := new(big.Float).SetPrec(512).Sub(big.NewFloat(float64(a[i])), big.NewFloat(float64(b[i])))
			exact.Add(exact, x.Mul(x, x))
		}
		e, _ := exact.Float64()
		if math.Abs(got-e) > 1e-14*e {
			t.Fatalf("D=%d: L2SqF64 %v, exact %v", d, got, e)
		}
	}
}

func TestL2SqF64Views(t *testing.T) { withImpls(t, testL2SqF64Views) }

// testL2SqF64Views: L2SqF64Views over scattered, longer views equals
// L2SqF64 on each view bit for bit, at every dimension up to 70 and at
// large ones; out past len(views) is not touched.
func testL2SqF64Views(t *testing.T) {
	r := rand.New(rand.NewPCG(64, 2))
	for _, d := range append(seq(0, 70), 127, 128, 129, 200, 784, 785) {
		for _, n := range []int{0, 1, 2, 3, 7} {
			q := make([]float32, d)
			for i := range q {
				q[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(5)-2)))
			}
			pool := make([]float32, 10*(d+5))
			for i := range pool {
				pool[i] = float32(r.NormFloat64())
			}
			views := make([][]float32, n)
			for i := range views {
				at := r.IntN(10) * (d + 5)
				views[i] = pool[at : at+d+r.IntN(5)]
			}
			out := make([]float64, n+1)
			for i := range out {
				out[i] = math.NaN()
			}
			L2SqF64Views(q, views, out[:n])
			for i, v := range views {
				if want := L2SqF64(q, v); math.Float64bits(out[i]) != math.Float64bits(want) {
					t.Fatalf("D=%d view %d: %v, L2SqF64 %v", d, i, out[i], want)
				}
			}
			if !math.IsNaN(out[n]) {
				t.Fatalf("D=%d n=%d: wrote past the views", d, n)
			}
		}
	}
}

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

// TestL2SqF64ViewsPanics: a view shorter than the query, or a length
// mismatch, panics instead of reading past the view.
func TestL2SqF64ViewsPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"short view": func() { L2SqF64Views(make([]float32, 5), [][]float32{make([]float32, 4)}, make([]float64, 1)) },
		"mismatch":   func() { L2SqF64Views(make([]float32, 5), [][]float32{make([]float32, 5)}, make([]float64, 2)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
