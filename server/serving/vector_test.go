package serving_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/parqdb/parqdb/server/serving"
)

func TestVectorChecks(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name   string
		v      []float32
		cosine bool
		want   string // the message for where = "vector", "" for none
	}{
		{"finite", []float32{1, -2, 3e38}, true, ""},
		{"zeros under l2", []float32{0, 0, 0}, false, ""},
		{"zeros under cosine", []float32{0, 0, 0}, true, "vector is all zeros: it has no direction under the cosine metric"},
		{"negative zeros under cosine", []float32{float32(math.Copysign(0, -1)), 0}, true, "vector is all zeros: it has no direction under the cosine metric"},
		{"a subnormal has a direction", []float32{0, math.SmallestNonzeroFloat32}, true, ""},
		{"NaN", []float32{1, nan}, false, "vector[1] = NaN is not a finite float32"},
		{"+Inf", []float32{inf, 1}, false, "vector[0] = +Inf is not a finite float32 (a number beyond ±3.4e38 overflows to it)"},
		{"-Inf", []float32{1, 2, -inf}, true, "vector[2] = -Inf is not a finite float32 (a number beyond ±3.4e38 overflows to it)"},
		{"the first problem", []float32{0, nan, inf}, true, "vector[1] = NaN is not a finite float32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := serving.VectorProblem(tc.v, tc.cosine)
			if tc.want == "" {
				if p != "" {
					t.Fatalf("problem %q, want none", p)
				}
				return
			}
			err := serving.InvalidVector("vector", p)
			if err.Message != tc.want || err.Code != serving.CodeInvalidVector || err.Status != 400 {
				t.Fatalf("got %d %s %q, want 400 %s %q", err.Status, err.Code, err.Message, serving.CodeInvalidVector, tc.want)
			}
		})
	}
	if err := serving.CheckDim("vector", 50, 50, "words"); err != nil {
		t.Fatalf("CheckDim of a right dimension: %v", err)
	}
	var se *serving.Error
	err := serving.CheckDim("query_vector", 49, 50, "words")
	if !errors.As(err, &se) || se.Code != serving.CodeWrongDimension ||
		se.Message != `query_vector has 49 values; index "words" has dimension 50` {
		t.Fatalf("CheckDim: %v", err)
	}
	if n := testing.AllocsPerRun(100, func() { serving.VectorProblem([]float32{1, 2, 3}, true) }); n != 0 {
		t.Fatalf("a good vector's check allocates %.0f times", n)
	}
}

// FuzzVectorProblem: the fast check agrees with a plain per-value one on
// any bits, any length (odd lengths put the last value alone).
func FuzzVectorProblem(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x7f}, true)
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0xc0, 0x7f, 0, 0, 0, 0x80}, false)
	f.Add([]byte{}, true)
	f.Fuzz(func(t *testing.T, raw []byte, cosine bool) {
		v := make([]float32, len(raw)/4)
		for i := range v {
			v[i] = math.Float32frombits(uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24)
		}
		want := ""
		zeros := true
		for j, x := range v {
			if math.IsInf(float64(x), 0) || math.IsNaN(float64(x)) {
				if !math.IsNaN(float64(x)) {
					want = fmt.Sprintf("[%d] = %g is not a finite float32 (a number beyond ±3.4e38 overflows to it)", j, x)
				} else {
					want = fmt.Sprintf("[%d] = NaN is not a finite float32", j)
				}
				break
			}
			zeros = zeros && x == 0
		}
		if want == "" && zeros && cosine {
			want = " is all zeros: it has no direction under the cosine metric"
		}
		if got := serving.VectorProblem(v, cosine); got != want {
			t.Fatalf("VectorProblem(%v, %v) = %q, want %q", v, cosine, got, want)
		}
	})
}
