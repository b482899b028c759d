package query

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/lvq"
	"github.com/parqdb/parqdb/metadata"
)

// TestPrepareQuery checks prepareQuery's one-pass preparation against its
// definition: under cosine s.q is lvq.Normalize's output bit for bit,
// otherwise q; s.qp is s.q zero padded to the stride; s.sumq and s.norm2
// are sumQuery's sums; a NaN or ±Inf value is named by its index, a zero
// vector under cosine is refused, and a wrong length names both.
func TestPrepareQuery(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, metric := range []string{metadata.MetricCosine, metadata.MetricL2Squared} {
		for _, dim := range []int{1, 3, 16, 50, 129} {
			ix := &Index{snap: &metadata.Snapshot{Metric: metric}}
			ix.params.Dimension = int32(dim)
			s := &scratch{}
			for trial := range 200 {
				q := make([]float32, dim)
				scale := math.Pow(10, float64(r.IntN(60)-30))
				for j := range q {
					switch r.IntN(8) {
					case 0:
						q[j] = 0
					case 1:
						q[j] = math.Float32frombits(r.Uint32() & 0x807fffff) // subnormal
					default:
						q[j] = float32(r.NormFloat64() * scale)
					}
				}
				if trial == 0 {
					q[0] = math.MaxFloat32 // the largest square still fits a float64
				}
				want := slices.Clone(q)
				if metric == metadata.MetricCosine {
					if err := lvq.Normalize(want, q); err != nil {
						if err := ix.prepareQuery(s, q); !errors.Is(err, ErrBadQuery) {
							t.Fatalf("%s dim %d: %v for a vector Normalize refuses (%v)", metric, dim, err, want)
						}
						continue
					}
				}
				if err := ix.prepareQuery(s, q); err != nil {
					t.Fatalf("%s dim %d %v: %v", metric, dim, q, err)
				}
				for j := range want {
					if math.Float32bits(s.q[j]) != math.Float32bits(want[j]) {
						t.Fatalf("%s dim %d value %d: %v, want %v (query %v)", metric, dim, j, s.q[j], want[j], q)
					}
				}
				w := stride(dim)
				if len(s.qp) != w || !slices.Equal(s.qp[:dim], s.q) || slices.ContainsFunc(s.qp[dim:], func(v float32) bool { return v != 0 }) {
					t.Fatalf("%s dim %d: qp %v for q %v", metric, dim, s.qp, s.q)
				}
				ref := &scratch{q: s.q}
				ref.sumQuery()
				if s.sumq != ref.sumq || s.norm2 != ref.norm2 {
					t.Fatalf("%s dim %d: sums %v %v, sumQuery says %v %v", metric, dim, s.sumq, s.norm2, ref.sumq, ref.norm2)
				}
			}
			for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
				q := make([]float32, dim)
				q[0] = 1
				q[dim-1] = bad
				err := ix.prepareQuery(s, q)
				if !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), "value "+strconv.Itoa(dim-1)) {
					t.Errorf("%s dim %d: %v for value %d = %v", metric, dim, err, dim-1, bad)
				}
			}
			if err := ix.prepareQuery(s, make([]float32, dim+1)); !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), strconv.Itoa(dim+1)+" values") {
				t.Errorf("%s dim %d: %v for %d values", metric, dim, err, dim+1)
			}
			err := ix.prepareQuery(s, make([]float32, dim))
			if metric == metadata.MetricCosine && !errors.Is(err, ErrBadQuery) {
				t.Errorf("dim %d: %v for a zero query under cosine", dim, err)
			} else if metric != metadata.MetricCosine && err != nil {
				t.Errorf("dim %d: %v for a zero query under %s", dim, err, metric)
			}
		}
	}
}

// sumQuery sets s.sumq and s.norm2 from s.q as prepareQuery sums them (in
// order, in float64): the reference of TestPrepareQuery, and the setup of
// tests that fill a scratch by hand.
func (s *scratch) sumQuery() {
	s.sumq, s.norm2 = 0, 0
	for _, v := range s.q {
		f := float64(v)
		s.sumq += f
		s.norm2 += f * f
	}
}
