package ivf

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func validCentroids() *Centroids {
	return &Centroids{
		Dim: 2, NList: 3,
		Roots:      []float32{0, 0, 1, 1},
		CIDOffsets: []int32{0, 2, 3},
		Offsets:    []float32{0, 0, 1},
		Scales:     []float32{1, 0.5, 0},
		Codes:      []byte{1, 2, 3, 4, 0, 0},
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *Centroids)
		want   string // substring of the error; "" means valid
	}{
		{"valid", func(*Centroids) {}, ""},
		{"dim zero", func(c *Centroids) { c.Dim = 0 }, "dimension 0"},
		{"nlist zero", func(c *Centroids) { c.NList = 0 }, "nlist 0"},
		{"no offsets", func(c *Centroids) { c.CIDOffsets = []int32{0} }, "cid_offsets has 1 entries"},
		{"first offset", func(c *Centroids) { c.CIDOffsets = []int32{1, 2, 3} }, "cid_offsets[0] = 1"},
		{"last offset", func(c *Centroids) { c.CIDOffsets = []int32{0, 1, 2} }, "want nlist 3"},
		{"empty root", func(c *Centroids) {
			c.CIDOffsets = []int32{0, 0, 3}
		}, "root 0 is empty"},
		{"too many roots", func(c *Centroids) {
			c.CIDOffsets = []int32{0, 1, 2, 3, 3}
			c.Roots = make([]float32, 8)
		}, "4 roots exceed nlist 3"},
		{"roots length", func(c *Centroids) { c.Roots = c.Roots[:3] }, "roots has 3 floats"},
		{"root NaN", func(c *Centroids) { c.Roots[3] = float32(math.NaN()) }, "root 1 element 1"},
		{"offsets length", func(c *Centroids) { c.Offsets = c.Offsets[:2] }, "offsets has 2 entries"},
		{"scales length", func(c *Centroids) { c.Scales = nil }, "scales has 0 entries"},
		{"codes length", func(c *Centroids) { c.Codes = c.Codes[:5] }, "codes has 5 bytes"},
		{"offset inf", func(c *Centroids) { c.Offsets[1] = float32(math.Inf(-1)) }, "leaf 1 offset"},
		{"negative scale", func(c *Centroids) { c.Scales[0] = -1 }, "leaf 0 scale -1"},
		{"scale NaN", func(c *Centroids) { c.Scales[2] = float32(math.NaN()) }, "leaf 2 scale NaN"},
		{"reconstruction overflow", func(c *Centroids) {
			c.Offsets[0] = 3e38
			c.Scales[0] = 3e38
		}, "leaf 0 reconstruction"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validCentroids()
			tt.mutate(c)
			err := c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidCentroids) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want ErrInvalidCentroids containing %q", err, tt.want)
			}
			if perr := c.Prepare(); perr == nil {
				t.Fatal("Prepare accepted invalid centroids")
			}
		})
	}
}

func TestValidateReportsAll(t *testing.T) {
	c := validCentroids()
	c.Scales[0] = -1
	c.Offsets[2] = float32(math.NaN())
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "leaf 0 scale") || !strings.Contains(err.Error(), "leaf 2 offset") {
		t.Fatalf("Validate = %v, want both problems", err)
	}
}

func TestRootOf(t *testing.T) {
	c := &Centroids{CIDOffsets: []int32{0, 3, 4, 9}}
	want := []int32{0, 0, 0, 1, 2, 2, 2, 2, 2}
	for cid, w := range want {
		if got := c.RootOf(int32(cid)); got != w {
			t.Errorf("RootOf(%d) = %d, want %d", cid, got, w)
		}
	}
	for _, cid := range []int32{-1, 9, 100} {
		if got := c.RootOf(cid); got != -1 {
			t.Errorf("RootOf(%d) = %d, want -1", cid, got)
		}
	}
	if c.NumRoots() != 3 {
		t.Errorf("NumRoots = %d", c.NumRoots())
	}
}

func TestLeafIsLVQ8Reconstruction(t *testing.T) {
	c := validCentroids()
	want := [][]float32{{1, 2}, {1.5, 2}, {1, 1}}
	for cid, w := range want {
		got := c.Leaf(int32(cid))
		if got[0] != w[0] || got[1] != w[1] {
			t.Errorf("Leaf(%d) = %v, want %v", cid, got, w)
		}
	}
}
