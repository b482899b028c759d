package ivf

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// checkAssign asserts Assign, AssignBatch and AssignParallel all equal
// ExactNearest on every row of xs.
func checkAssign(t *testing.T, c *Centroids, xs []float32) AssignStats {
	t.Helper()
	d := c.Dim
	n := len(xs) / d
	as := NewAssigner(c)
	batch := make([]int32, n)
	as.AssignBatch(xs, batch)
	par := make([]int32, n)
	if err := as.AssignParallel(context.Background(), xs, par, 3); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		x := xs[i*d : (i+1)*d]
		want := ExactNearest(c, x)
		if got := as.Assign(x); got != want {
			t.Fatalf("row %d: Assign = %d, ExactNearest = %d", i, got, want)
		}
		if batch[i] != want || par[i] != want {
			t.Fatalf("row %d: AssignBatch = %d, AssignParallel = %d, ExactNearest = %d", i, batch[i], par[i], want)
		}
	}
	return as.Stats()
}

func TestAssignTrained(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	tests := []struct {
		name          string
		n, dim, nlist int
		data          func(n, dim int) []float32
	}{
		{"gaussian", 3000, 24, 64, func(n, dim int) []float32 { return randVecs(rng, n, dim, 1) }},
		{"clustered", 3000, 32, 100, func(n, dim int) []float32 { return clustered(rng, n, dim, 30, 0.2) }},
		{"cosine", 3000, 16, 50, func(n, dim int) []float32 {
			v := clustered(rng, n, dim, 10, 0.5)
			normalizeRows(v, dim)
			return v
		}},
		{"dim 1", 1000, 1, 20, func(n, dim int) []float32 { return randVecs(rng, n, dim, 3) }},
		{"nlist 1", 200, 5, 1, func(n, dim int) []float32 { return randVecs(rng, n, dim, 1) }},
		{"nlist n", 60, 5, 60, func(n, dim int) []float32 { return randVecs(rng, n, dim, 1) }},
		{"offset data", 2000, 8, 30, func(n, dim int) []float32 {
			v := clustered(rng, n, dim, 5, 0.01)
			for i := range v {
				v[i] += 1000
			}
			return v
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sample := tt.data(tt.n, tt.dim)
			c, _ := trainOrFatal(t, sample, tt.dim, TrainConfig{NList: tt.nlist, Seed: 1})
			// Assign the sample and fresh rows from the same distribution.
			st := checkAssign(t, c, append(sample, tt.data(500, tt.dim)...))
			t.Logf("stats %+v over %d rows × %d leaves", st, tt.n+500, tt.nlist)
		})
	}
}

// TestAssignAdversarial uses leaves with exactly known integer
// reconstructions so that exact ties, duplicates and near-ties can be built.
func TestAssignAdversarial(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	const dim = 4
	var leaves [][]byte
	for range 30 {
		l := make([]byte, dim)
		for k := range l {
			l[k] = byte(rng.IntN(8) * 2) // even values: midpoints are integers
		}
		leaves = append(leaves, l)
	}
	// Duplicated reconstructions across and within roots.
	leaves = append(leaves, leaves[3], leaves[17], leaves[17])
	c := intCentroids(t, dim, leaves, []int{5, 10, 1, 14, 3})
	var xs []float32
	vec := func(j int) []float32 {
		v := make([]float32, dim)
		for k := range v {
			v[k] = float32(leaves[j][k])
		}
		return v
	}
	for j := range leaves {
		xs = append(xs, vec(j)...) // on a leaf (ties with its duplicates)
	}
	for range 400 {
		a, b := rng.IntN(len(leaves)), rng.IntN(len(leaves))
		va, vb := vec(a), vec(b)
		for k := range dim {
			xs = append(xs, (va[k]+vb[k])/2) // exact midpoints: exact ties
		}
	}
	for range 400 {
		a := vec(rng.IntN(len(leaves)))
		for k := range dim {
			// a nudge of one float32 ulp around a leaf
			a[k] = math.Nextafter32(a[k], float32(rng.IntN(3)-1)*100)
		}
		xs = append(xs, a...)
	}
	xs = append(xs, randVecs(rng, 300, dim, 8)...)
	st := checkAssign(t, c, xs)
	if st.ExactFallback == 0 {
		t.Fatalf("no exact fallback exercised: %+v", st)
	}
	// Both fast modes: pruned (one row) and block (one row per block).
	as0 := NewAssigner(c)
	sc := as0.newScratch()
	one := make([]int32, 1)
	for i := 0; i < len(xs); i += dim {
		want := ExactNearest(c, xs[i:i+dim])
		if got := as0.assign(xs[i:i+dim], sc); got != want {
			t.Fatalf("row %d: pruned mode %d, want %d", i/dim, got, want)
		}
		as0.assignBlock(xs[i:i+dim], one, sc)
		if one[0] != want {
			t.Fatalf("row %d: block mode %d, want %d", i/dim, one[0], want)
		}
	}
	// Tie rule: a row on leaf 3 goes to 3, never to its duplicate 30.
	as := NewAssigner(c)
	if got := as.Assign(vec(30)); got != 3 {
		t.Fatalf("duplicate leaf: Assign = %d, want 3", got)
	}
	// Spot-check the float64 reference against pure big arithmetic.
	for i := 0; i < len(xs); i += dim * 7 {
		if got, want := ExactNearest(c, xs[i:i+dim]), bigNearest(c, xs[i:i+dim]); got != want {
			t.Fatalf("row %d: ExactNearest = %d, bigNearest = %d", i/dim, got, want)
		}
	}
}

// TestAssignExtremeValues covers the float64 path (values too large for
// float32 products) and subnormal values.
func TestAssignExtremeValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	const dim = 3
	tests := []struct {
		name  string
		scale float64
	}{
		{"huge", 1e30},
		{"tiny", 1e-40},
		{"unit", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sample := randVecs(rng, 400, dim, tt.scale)
			c, _ := trainOrFatal(t, sample, dim, TrainConfig{NList: 10, Seed: 2})
			xs := append(randVecs(rng, 200, dim, tt.scale), sample...)
			checkAssign(t, c, xs)
			for i := 0; i < 200*dim; i += dim * 5 {
				if got, want := ExactNearest(c, xs[i:i+dim]), bigNearest(c, xs[i:i+dim]); got != want {
					t.Fatalf("row %d: ExactNearest = %d, bigNearest = %d", i/dim, got, want)
				}
			}
		})
	}
	// A huge query against ordinary centroids takes the float64 path.
	c, _ := trainOrFatal(t, randVecs(rng, 100, dim, 1), dim, TrainConfig{NList: 5, Seed: 2})
	x := []float32{3e38, -3e38, 1}
	if got, want := NewAssigner(c).Assign(x), bigNearest(c, x); got != want {
		t.Fatalf("huge query: Assign = %d, want %d", got, want)
	}
}

func TestAssignNonFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	c, _ := trainOrFatal(t, randVecs(rng, 100, 2, 1), 2, TrainConfig{NList: 4, Seed: 2})
	as := NewAssigner(c)
	for _, x := range [][]float32{
		{float32(math.NaN()), 0},
		{0, float32(math.Inf(1))},
		{float32(math.Inf(-1)), 3e38},
	} {
		if got := as.Assign(x); got != -1 {
			t.Errorf("Assign(%v) = %d, want -1", x, got)
		}
		if got := ExactNearest(c, x); got != -1 {
			t.Errorf("ExactNearest(%v) = %d, want -1", x, got)
		}
	}
	xs := []float32{0, 0, 1, 1, float32(math.NaN()), 1, 2, 2}
	out := make([]int32, 4)
	err := as.AssignParallel(context.Background(), xs, out, 2)
	if !errors.Is(err, ErrNonFinite) || out[2] != -1 || out[0] < 0 {
		t.Fatalf("AssignParallel = %v, %v", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := as.AssignParallel(ctx, xs, out, 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled AssignParallel = %v", err)
	}
}

// FuzzAssign checks exact assignment against pure big arithmetic on small
// integer-coded centroid sets and arbitrary float32 queries.
func FuzzAssign(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, float32(1.5), float32(2.5), float32(4))
	f.Add([]byte{0, 0, 0, 0, 2, 2, 2, 2}, float32(1), float32(1), float32(1))
	f.Add([]byte{255, 0, 0, 255, 255, 0}, float32(127.5), float32(127.5), float32(0))
	f.Fuzz(func(t *testing.T, codes []byte, a, b, s float32) {
		const dim = 2
		if len(codes) < dim {
			return
		}
		codes = codes[:min(len(codes), 64)/dim*dim]
		nl := len(codes) / dim
		var leaves [][]byte
		for j := range nl {
			leaves = append(leaves, codes[j*dim:(j+1)*dim])
		}
		sizes := []int{}
		for rest := nl; rest > 0; {
			sz := min(rest, 1+int(codes[0])%4)
			sizes = append(sizes, sz)
			rest -= sz
		}
		c := intCentroids(t, dim, leaves, sizes)
		if !finite32(s) || s == 0 {
			s = 1
		}
		c.Scales[0] = float32(math.Abs(float64(s)))
		if !finite32(float32(float64(c.Scales[0]) * 255)) {
			c.Scales[0] = 1
		}
		x := []float32{a, b}
		got := NewAssigner(c).Assign(x)
		if !finite32(a) || !finite32(b) {
			if got != -1 {
				t.Fatalf("non-finite query assigned to %d", got)
			}
			return
		}
		if want := bigNearest(c, x); got != want {
			t.Fatalf("Assign(%v) = %d, bigNearest = %d", x, got, want)
		}
	})
}

// TestAssignPixels re-verifies exact assignment on Fashion-MNIST-like data:
// integer pixels 0..255 (all positive, far from the origin, many zeros),
// where the untranslated float32 bound would be wide. The translated block
// path must stay exact and leave few rows with more than one candidate.
func TestAssignPixels(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, dim := range []int{784, 100, 33} {
		t.Run(strconv.Itoa(dim), func(t *testing.T) {
			protos := make([][]float32, 12)
			for p := range protos {
				protos[p] = make([]float32, dim)
				for k := range dim {
					if rng.IntN(3) > 0 {
						protos[p][k] = float32(rng.IntN(256))
					}
				}
			}
			gen := func(n int) []float32 {
				v := make([]float32, 0, n*dim)
				for range n {
					pr := protos[rng.IntN(len(protos))]
					for k := range dim {
						x := math.Round(float64(pr[k]) + rng.NormFloat64()*40)
						v = append(v, float32(min(255, max(0, x))))
					}
				}
				return v
			}
			sample := gen(1500)
			c, _ := trainOrFatal(t, sample, dim, TrainConfig{NList: 40, Seed: 3})
			xs := append(sample, gen(500)...)
			st := checkAssign(t, c, xs)
			rows := int64(len(xs) / dim)
			t.Logf("stats %+v over %d rows", st, rows)
			if st.MultiCandidate*10 > rows*3 { // checkAssign runs every row 3 times
				t.Fatalf("%d multi-candidate decisions over %d rows: bound too wide", st.MultiCandidate, rows)
			}
		})
	}
}
