package ivf

import (
	"archive/zip"
	"bufio"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// bigNearest is the slowest, most obviously correct reference: exact
// big.Float distances to every leaf, ties to the smaller cid.
func bigNearest(c *Centroids, x []float32) int32 {
	best := int32(-1)
	var bestD, cur, tmp big.Float
	for cid := int32(0); int(cid) < c.NList; cid++ {
		exactL2Sq(x, c.Leaf(cid), &cur, &tmp)
		if best < 0 || cur.Cmp(&bestD) < 0 {
			bestD.Set(&cur)
			best = cid
		}
	}
	return best
}

func randVecs(rng *rand.Rand, n, dim int, scale float64) []float32 {
	v := make([]float32, n*dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * scale)
	}
	return v
}

// clustered returns n rows around k random centres.
func clustered(rng *rand.Rand, n, dim, k int, spread float64) []float32 {
	centres := randVecs(rng, k, dim, 1)
	v := make([]float32, n*dim)
	for i := range n {
		c := rng.IntN(k)
		for t := range dim {
			v[i*dim+t] = centres[c*dim+t] + float32(rng.NormFloat64()*spread)
		}
	}
	return v
}

func normalizeRows(v []float32, dim int) {
	for i := 0; i < len(v); i += dim {
		var s float64
		for _, x := range v[i : i+dim] {
			s += float64(x) * float64(x)
		}
		s = math.Sqrt(s)
		for t := i; t < i+dim; t++ {
			v[t] = float32(float64(v[t]) / s)
		}
	}
}

// intCentroids builds Centroids whose leaf reconstructions are exactly the
// given byte vectors (offset 0, scale 1), split into roots of the given
// sizes; every root is the mean of its leaves.
func intCentroids(t testing.TB, dim int, leaves [][]byte, rootSizes []int) *Centroids {
	t.Helper()
	c := &Centroids{Dim: dim, NList: len(leaves), CIDOffsets: []int32{0}}
	for _, l := range leaves {
		c.Codes = append(c.Codes, l...)
		c.Offsets = append(c.Offsets, 0)
		c.Scales = append(c.Scales, 1)
	}
	cid := 0
	for _, sz := range rootSizes {
		mean := make([]float32, dim)
		for j := cid; j < cid+sz; j++ {
			for k := range dim {
				mean[k] += float32(leaves[j][k]) / float32(sz)
			}
		}
		c.Roots = append(c.Roots, mean...)
		cid += sz
		c.CIDOffsets = append(c.CIDOffsets, int32(cid))
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// loadGloVe reads the GloVe sample: words and their 50-d vectors.
func loadGloVe(t testing.TB) ([]string, []float32, int) {
	t.Helper()
	zr, err := zip.OpenReader("testdata/glove.6B.50d.10k.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 1 {
		t.Fatalf("want one file in the GloVe zip, got %d", len(zr.File))
	}
	f, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const dim = 50
	var words []string
	var vecs []float32
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != dim+1 {
			t.Fatalf("line %d: %d fields, want %d", len(words)+1, len(fields), dim+1)
		}
		words = append(words, fields[0])
		for _, s := range fields[1:] {
			v, err := strconv.ParseFloat(s, 32)
			if err != nil {
				t.Fatalf("line %d: %v", len(words), err)
			}
			vecs = append(vecs, float32(v))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return words, vecs, dim
}
