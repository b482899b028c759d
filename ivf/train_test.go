package ivf

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestAllocateLeaves(t *testing.T) {
	tests := []struct {
		name  string
		nlist int
		pops  []int
		want  []int
	}{
		{"exact quotas", 10, []int{50, 30, 20}, []int{5, 3, 2}},
		{"largest remainder", 10, []int{34, 33, 33}, []int{4, 3, 3}},
		{"more roots than leaves", 2, []int{5, 5, 10}, nil},
		{"minimum one", 5, []int{97, 1, 1, 1}, []int{2, 1, 1, 1}},
		{"cap at population", 6, []int{1, 1, 4}, []int{1, 1, 4}},
		{"one root", 7, []int{100}, []int{7}},
		{"nlist equals rows", 4, []int{1, 3}, []int{1, 3}},
		{"more leaves than rows", 3, []int{1, 1}, nil},
		{"zero population", 3, []int{4, 0}, nil},
		{"remainder tie to smaller root", 3, []int{2, 2}, []int{2, 1}},
		{"surplus taken from largest excess", 4, []int{10, 1, 1, 1}, []int{1, 1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AllocateLeaves(tt.nlist, tt.pops)
			if tt.want == nil {
				if !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("AllocateLeaves = %v, %v; want ErrInvalidConfig", got, err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("AllocateLeaves(%d, %v) = %v, %v; want %v", tt.nlist, tt.pops, got, err, tt.want)
			}
		})
	}
}

// TestAllocateLeavesProperties checks the allocation contract on random
// populations: exact total, bounds, and the largest-remainder property that
// without minimum-one bumps every root gets ⌊q⌋ or ⌈q⌉.
func TestAllocateLeavesProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		r := 1 + rng.IntN(40)
		pops := make([]int, r)
		n := 0
		for i := range pops {
			pops[i] = 1 + rng.IntN(1+rng.IntN(500))
			n += pops[i]
		}
		nlist := r + rng.IntN(n-r+1)
		b, err := AllocateLeaves(nlist, pops)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		sum, bumped := 0, false
		for i, bi := range b {
			sum += bi
			if bi < 1 || bi > pops[i] {
				t.Fatalf("trial %d: root %d gets %d leaves for %d rows", trial, i, bi, pops[i])
			}
			if nlist*pops[i] < n {
				bumped = true
			}
		}
		if sum != nlist {
			t.Fatalf("trial %d: %d leaves allocated, want %d", trial, sum, nlist)
		}
		if bumped {
			continue
		}
		for i, bi := range b {
			q := float64(nlist) * float64(pops[i]) / float64(n)
			if float64(bi) < math.Floor(q)-1e-9 || float64(bi) > math.Ceil(q)+1e-9 {
				t.Fatalf("trial %d: root %d gets %d leaves for quota %.3f", trial, i, bi, q)
			}
		}
	}
}

func checkCentroids(t *testing.T, c *Centroids, nlist, dim int) {
	t.Helper()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.NList != nlist || c.Dim != dim {
		t.Fatalf("NList, Dim = %d, %d; want %d, %d", c.NList, c.Dim, nlist, dim)
	}
	for cid := int32(0); int(cid) < nlist; cid++ {
		r := c.RootOf(cid)
		if cid < c.CIDOffsets[r] || cid >= c.CIDOffsets[r+1] {
			t.Fatalf("cid %d not in root %d interval", cid, r)
		}
	}
}

func trainOrFatal(t testing.TB, sample []float32, dim int, cfg TrainConfig) (*Centroids, TrainReport) {
	t.Helper()
	c, rep, err := Train(context.Background(), sample, dim, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, rep
}

func TestTrainShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tests := []struct {
		name          string
		n, dim, nlist int
		roots         int
		wantRoots     int
	}{
		{"nlist 1", 50, 8, 1, 0, 1},
		{"nlist n", 40, 4, 40, 0, 6},
		{"dim 1", 300, 1, 12, 0, 3},
		{"default roots", 2000, 16, 100, 0, 10},
		{"explicit roots", 2000, 16, 100, 7, 7},
		{"roots above nlist", 200, 3, 5, 9, 5},
		{"one root", 500, 5, 20, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sample := clustered(rng, tt.n, tt.dim, 10, 0.3)
			c, rep := trainOrFatal(t, sample, tt.dim, TrainConfig{NList: tt.nlist, Roots: tt.roots, Seed: 9})
			checkCentroids(t, c, tt.nlist, tt.dim)
			if rep.Flat || rep.Roots != tt.wantRoots || c.NumRoots() != tt.wantRoots {
				t.Fatalf("report %+v, roots %d; want %d hierarchical roots", rep, c.NumRoots(), tt.wantRoots)
			}
		})
	}
}

// TestTrainBudgetProportional retrains the roots the way Train does and
// checks that the leaf intervals follow AllocateLeaves of the root
// populations.
func TestTrainBudgetProportional(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, dim, nlist = 3000, 8, 60
	sample := clustered(rng, n, dim, 5, 0.5)
	c, rep := trainOrFatal(t, sample, dim, TrainConfig{NList: nlist, Seed: 11})
	if rep.Flat {
		t.Fatal("unexpected flat fallback")
	}
	root := &kmeans{data: sample, n: n, dim: dim, k: c.NumRoots(), iters: DefaultIterations, seed: 11, stream: streamRoots, workers: 1}
	if err := root.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want, err := AllocateLeaves(nlist, root.counts)
	if err != nil {
		t.Fatal(err)
	}
	for r := range c.NumRoots() {
		if got := int(c.CIDOffsets[r+1] - c.CIDOffsets[r]); got != want[r] {
			t.Fatalf("root %d owns %d leaves, want %d (populations %v)", r, got, want[r], root.counts)
		}
	}
	if !slices.Equal(root.centroids, c.Roots) {
		t.Fatal("root centroids differ from the root k-means")
	}
}

func centroidBytes(c *Centroids) []byte {
	var b []byte
	for _, v := range c.Roots {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	for _, v := range c.CIDOffsets {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	for i := range c.Offsets {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(c.Offsets[i]))
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(c.Scales[i]))
	}
	return append(b, c.Codes...)
}

func TestTrainDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const dim = 12
	sample := clustered(rng, 5000, dim, 20, 0.4)
	var ref []byte
	for _, w := range []int{1, 2, 4} {
		for range 2 {
			c, _ := trainOrFatal(t, sample, dim, TrainConfig{NList: 64, Seed: 42, Workers: w})
			b := centroidBytes(c)
			if ref == nil {
				ref = b
			} else if !bytes.Equal(b, ref) {
				t.Fatalf("Workers=%d: centroids differ from Workers=1", w)
			}
		}
	}
	c, _ := trainOrFatal(t, sample, dim, TrainConfig{NList: 64, Seed: 43})
	if bytes.Equal(centroidBytes(c), ref) {
		t.Fatal("a different seed gave identical centroids")
	}
	// The flat fallback is deterministic too.
	dup := make([]float32, 0, 400*dim)
	for i := range 400 {
		dup = append(dup, sample[(i%3)*dim:(i%3+1)*dim]...)
	}
	var flatRef []byte
	for _, w := range []int{1, 3} {
		c, rep := trainOrFatal(t, dup, dim, TrainConfig{NList: 20, Roots: 5, Seed: 1, Workers: w})
		if !rep.Flat {
			t.Fatal("want flat fallback")
		}
		if flatRef == nil {
			flatRef = centroidBytes(c)
		} else if !bytes.Equal(flatRef, centroidBytes(c)) {
			t.Fatal("flat fallback differs across Workers")
		}
	}
}

func TestTrainFlatFallback(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const dim = 6
	same := make([]float32, 100*dim)
	for i := range same {
		same[i] = float32(i%dim) + 0.25
	}
	two := make([]float32, 0, 90*dim)
	a, b := randVecs(rng, 1, dim, 1), randVecs(rng, 1, dim, 1)
	for i := range 90 {
		if i%3 == 0 {
			two = append(two, a...)
		} else {
			two = append(two, b...)
		}
	}
	tests := []struct {
		name        string
		sample      []float32
		nlist       int
		roots       int
		maxRoots    int
		wantWarning int
	}{
		{"all identical", same, 16, 4, 1, 2},
		{"two distinct rows", two, 9, 3, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rep := trainOrFatal(t, tt.sample, dim, TrainConfig{NList: tt.nlist, Roots: tt.roots, Seed: 3})
			checkCentroids(t, c, tt.nlist, dim)
			if !rep.Flat || len(rep.Warnings) != tt.wantWarning {
				t.Fatalf("report %+v: want flat fallback with %d warnings", rep, tt.wantWarning)
			}
			if c.NumRoots() < 1 || c.NumRoots() > tt.maxRoots || rep.Roots != c.NumRoots() {
				t.Fatalf("%d roots (report %d), want 1..%d", c.NumRoots(), rep.Roots, tt.maxRoots)
			}
			// Every sample row still has an exact assignment.
			as := NewAssigner(c)
			for i := 0; i < len(tt.sample); i += dim {
				x := tt.sample[i : i+dim]
				if got, want := as.Assign(x), ExactNearest(c, x); got != want {
					t.Fatalf("row %d: Assign %d, ExactNearest %d", i/dim, got, want)
				}
			}
		})
	}
}

func TestTrainRecoversEmptyRoots(t *testing.T) {
	// 12 well separated points, 12 roots: k-means++ may pick duplicates of
	// nothing here, but recovery must never need the fallback.
	rng := rand.New(rand.NewPCG(11, 12))
	const dim = 3
	sample := clustered(rng, 600, dim, 12, 0.01)
	c, rep := trainOrFatal(t, sample, dim, TrainConfig{NList: 24, Roots: 12, Seed: 5})
	checkCentroids(t, c, 24, dim)
	if rep.Flat || c.NumRoots() != 12 {
		t.Fatalf("report %+v", rep)
	}
}

func TestTrainErrors(t *testing.T) {
	ok := make([]float32, 40)
	nan := slices.Clone(ok)
	nan[13] = float32(math.NaN())
	tests := []struct {
		name   string
		sample []float32
		dim    int
		cfg    TrainConfig
		want   error
	}{
		{"nlist zero", ok, 4, TrainConfig{}, ErrInvalidConfig},
		{"negative roots", ok, 4, TrainConfig{NList: 2, Roots: -1}, ErrInvalidConfig},
		{"negative iterations", ok, 4, TrainConfig{NList: 2, Iterations: -1}, ErrInvalidConfig},
		{"dim zero", ok, 0, TrainConfig{NList: 2}, ErrInvalidConfig},
		{"ragged", ok, 3, TrainConfig{NList: 2}, ErrInvalidConfig},
		{"too few rows", ok, 4, TrainConfig{NList: 11}, ErrSampleTooSmall},
		{"NaN", nan, 4, TrainConfig{NList: 2}, ErrNonFinite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Train(context.Background(), tt.sample, tt.dim, tt.cfg)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Train = %v, want %v", err, tt.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Train(ctx, randVecs(rand.New(rand.NewPCG(1, 1)), 100, 4, 1), 4, TrainConfig{NList: 4}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Train = %v", err)
	}
}

// TestTrainProgress checks the contract of TrainConfig.Progress: the first
// total is ProgressTotal, done never decreases nor passes total, and runs
// that converge early count their unused iterations, so that the last
// iteration (before the final call) already reaches the total.
func TestTrainProgress(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	sample := clustered(rng, 1000, 4, 5, 0.3)
	for _, cfg := range []TrainConfig{
		{NList: 16, Seed: 1, Workers: 2},
		{NList: 30, Roots: 3, Seed: 2, Workers: 1, Iterations: 7},
	} {
		var dones, totals []int
		cfg.Progress = func(done, total int) {
			if n := len(dones); done > total || (n > 0 && done < dones[n-1]) {
				t.Errorf("progress %d/%d after %v", done, total, dones)
			}
			dones, totals = append(dones, done), append(totals, total)
		}
		_, _ = trainOrFatal(t, sample, 4, cfg)
		n := len(dones)
		if n < 2 {
			t.Fatalf("%+v: %d progress calls", cfg, n)
		}
		if totals[0] != cfg.ProgressTotal() {
			t.Errorf("%+v: first total %d, ProgressTotal %d", cfg, totals[0], cfg.ProgressTotal())
		}
		if dones[n-1] != totals[n-1] || dones[n-2] != totals[n-2] {
			t.Errorf("%+v: last calls %d/%d then %d/%d: unused iterations of converged runs not counted",
				cfg, dones[n-2], totals[n-2], dones[n-1], totals[n-1])
		}
	}
}

// TestTrainDeterministicParallelUpdate uses a sample large enough for the
// parallel centroid update (split by dimension) and two GEMM blocks of
// dimensions: the bytes must not depend on Workers.
func TestTrainDeterministicParallelUpdate(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const dim, n = 140, 7500
	if n*dim < 1<<20 {
		t.Fatal("sample too small to exercise the parallel update")
	}
	sample := clustered(rng, n, dim, 40, 0.5)
	var ref []byte
	for _, w := range []int{1, 2, 3} {
		c, _ := trainOrFatal(t, sample, dim, TrainConfig{NList: 50, Seed: 5, Workers: w, Iterations: 6})
		if b := centroidBytes(c); ref == nil {
			ref = b
		} else if !bytes.Equal(b, ref) {
			t.Fatalf("Workers=%d: centroids differ from Workers=1", w)
		}
	}
}

// TestTrainBoundaryRefinement checks step 6b: on data whose clusters
// straddle root boundaries (the GloVe sample, 10 roots), the refined leaves
// fit the sample better — a smaller sum of squared distances from every
// row to its exact nearest leaf reconstruction — than the leaves each root
// trained on its own rows, while the hierarchy (roots, CID intervals) stays
// that of the unrefined training.
func TestTrainBoundaryRefinement(t *testing.T) {
	_, vecs, dim := loadGloVe(t)
	cfg := TrainConfig{NList: 100, Seed: 3, Workers: 2}
	plain, _, err := train(context.Background(), vecs, dim, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	refined, _, err := train(context.Background(), vecs, dim, cfg, refineRounds)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plain.CIDOffsets, refined.CIDOffsets) || !slices.Equal(plain.Roots, refined.Roots) {
		t.Fatal("refinement changed the roots or the CID intervals")
	}
	objective := func(c *Centroids) float64 {
		var sum float64
		leaf := make([]float32, dim)
		for i := 0; i < len(vecs)/dim; i++ {
			x := vecs[i*dim : (i+1)*dim]
			copy(leaf, c.Leaf(ExactNearest(c, x)))
			sum += l2Sq64(x, leaf)
		}
		return sum
	}
	p, r := objective(plain), objective(refined)
	t.Logf("sum of squared distances to the nearest leaf: %.1f unrefined, %.1f refined (%.2f%%)", p, r, 100*(r-p)/p)
	if !(r < p) {
		t.Errorf("refined leaves fit the sample no better: %.3f, unrefined %.3f", r, p)
	}
}

func TestNearestRoots(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		n := 1 + rng.IntN(40)
		rd := make([]float32, n)
		for i := range rd {
			rd[i] = float32(rng.IntN(8)) // many ties
		}
		k := 1 + rng.IntN(n)
		got := make([]int32, k)
		nearestRoots(rd, got)
		want := make([]int32, n)
		for i := range want {
			want[i] = int32(i)
		}
		slices.SortStableFunc(want, func(a, b int32) int { return cmp.Compare(rd[a], rd[b]) })
		if !slices.Equal(got, want[:k]) {
			t.Fatalf("rd %v k %d: got %v, want %v", rd, k, got, want[:k])
		}
	}
}
