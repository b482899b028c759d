package indexer

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/metadata"
)

// tightClusters returns n rows of dim values: tight clusters around
// centres spread over [0, 10) — the case where a vector's LVQ4 step is set
// by its centre and dwarfs the distance to its neighbours.
func tightClusters(n, dim int, spread float64, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 9))
	centres := make([][]float64, 20)
	for i := range centres {
		centres[i] = make([]float64, dim)
		for j := range centres[i] {
			centres[i][j] = 10 * r.Float64()
		}
	}
	out := make([][]float32, n)
	for i := range out {
		c := centres[r.IntN(len(centres))]
		out[i] = make([]float32, dim)
		for j := range out[i] {
			out[i][j] = float32(c[j] + spread*r.NormFloat64())
		}
	}
	return out
}

// lowRank returns n rows of dim values on a random 3-dimensional subspace:
// neighbours differ by far more than an LVQ4 step.
func lowRank(n, dim int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	a := make([]float64, dim*3)
	for i := range a {
		a[i] = r.NormFloat64()
	}
	out := make([][]float32, n)
	for i := range out {
		z := [3]float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		out[i] = make([]float32, dim)
		for j := range out[i] {
			out[i][j] = float32(a[3*j]*z[0] + a[3*j+1]*z[1] + a[3*j+2]*z[2])
		}
	}
	return out
}

func flat(vs [][]float32) []float32 {
	var out []float32
	for _, v := range vs {
		out = append(out, v...)
	}
	return out
}

// TestLVQ4SampleRecall: tight clusters rank badly under LVQ4 codes,
// low-rank data well, and the nearest-neighbour selection is exact.
func TestLVQ4SampleRecall(t *testing.T) {
	bad, rows, ok := lvq4SampleRecall(flat(tightClusters(3000, 32, 0.05, 1)), 32, 1)
	if !ok || rows != 3000 || bad >= LVQ4CheckRecall {
		t.Fatalf("tight clusters: recall %.3f on %d rows (ok %v), want < %.2f", bad, rows, ok, LVQ4CheckRecall)
	}
	good, _, ok := lvq4SampleRecall(flat(lowRank(3000, 32, 2)), 32, 1)
	if !ok || good < LVQ4CheckRecall {
		t.Fatalf("low-rank data: recall %.3f, want ≥ %.2f", good, LVQ4CheckRecall)
	}
	if _, _, ok := lvq4SampleRecall(make([]float32, 50*4), 4, 1); ok {
		t.Fatal("50 rows: want no verdict")
	}
	d := []float32{5, 1, 3, 1, 0, 9, 2}
	if got := nearest(d, 4, 3); len(got) != 3 || got[0] != 1 || got[1] != 3 || got[2] != 6 {
		t.Fatalf("nearest: %v, want [1 3 6]", got)
	}
}

// TestLVQ4BuildWarning: an lvq4 build over tight clusters warns, naming
// the remedy; the same data in lvq8, or low-rank data in lvq4, does not.
func TestLVQ4BuildWarning(t *testing.T) {
	ctx := context.Background()
	env, dir := testEnv(t)
	for _, tc := range []struct {
		name, enc string
		tight     bool
		warn      bool
	}{{"tight4", metadata.EncodingLVQ4, true, true}, {"tight8", metadata.EncodingLVQ8, true, false}, {"lowrank4", metadata.EncodingLVQ4, false, false}} {
		vecs := tightClusters(3000, 32, 0.05, 3)
		if !tc.tight {
			vecs = lowRank(3000, 32, 3)
		}
		keys := make([]int64, len(vecs))
		for i := range keys {
			keys[i] = int64(i)
		}
		var buf bytes.Buffer
		if err := sourcetest.WriteVectors(&buf, keys, vecs, sourcetest.Options{}); err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(dir, tc.name+".parquet")
		if err := os.WriteFile(src, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Create(ctx, env, Options{Name: tc.name, Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 20, Encoding: tc.enc})
		if err != nil {
			t.Fatal(err)
		}
		warned := false
		for _, w := range res.Warnings {
			if strings.HasPrefix(w, "lvq4:") && strings.Contains(w, "--encoding lvq8") && strings.Contains(w, "--refine") {
				warned = true
			}
		}
		if warned != tc.warn {
			t.Fatalf("%s: warned %v, want %v (warnings %q)", tc.name, warned, tc.warn, res.Warnings)
		}
	}
}
