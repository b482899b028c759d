package fvecs

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func file(vs ...[]float32) []byte {
	var b []byte
	for _, v := range vs {
		b = Append(b, v)
	}
	return b
}

func TestParse(t *testing.T) {
	two := file([]float32{1, 2, 3}, []float32{-4, 5.5, float32(math.Inf(1))})
	for _, tc := range []struct {
		name string
		data []byte
		max  int
		want [][]float32
		err  string
	}{
		{"all", two, 0, [][]float32{{1, 2, 3}, {-4, 5.5, float32(math.Inf(1))}}, ""},
		{"first", two, 1, [][]float32{{1, 2, 3}}, ""},
		{"more than there are", two, 5, [][]float32{{1, 2, 3}, {-4, 5.5, float32(math.Inf(1))}}, ""},
		{"dimensions differ", file([]float32{1}, []float32{2, 3}), 0, [][]float32{{1}, {2, 3}}, ""},
		{"empty", nil, 0, nil, "no vectors"},
		{"truncated values", two[:len(two)-4], 0, nil, "vector 1: dimension 3 does not fit the file (8 bytes left)"},
		{"truncated count", append(file([]float32{1}), 3, 0), 0, nil, "vector 1: truncated at byte 8"},
		{"zero dimension", binary.LittleEndian.AppendUint32(nil, 0), 0, nil, "vector 0: dimension 0"},
		{"negative dimension", binary.LittleEndian.AppendUint32(nil, math.MaxUint32), 0, nil, "vector 0: dimension -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.data, tc.max)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestReadNamesThePath(t *testing.T) {
	p := filepath.Join(t.TempDir(), "q.fvecs")
	if err := os.WriteFile(p, []byte{1, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(p, 0); err == nil || !strings.HasPrefix(err.Error(), p+": vector 0: truncated") {
		t.Fatalf("error %v, want one naming %s and the vector", err, p)
	}
	if err := os.WriteFile(p, file([]float32{7, 8}), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Read(p, 0); err != nil || len(got) != 1 || got[0][1] != 8 {
		t.Fatalf("Read = %v, %v", got, err)
	}
}

// FuzzParse: any input parses or fails without a panic; what parses writes
// back (Append) to the bytes it was read from, and each vector's capacity
// ends at its length (appending to one never overwrites the next).
func FuzzParse(f *testing.F) {
	f.Add(file([]float32{1, 2}, []float32{3}), 0)
	f.Add([]byte{2, 0, 0, 0, 1}, 1)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		vs, err := Parse(data, max)
		if err != nil {
			return
		}
		if max > 0 && len(vs) > max {
			t.Fatalf("%d vectors for max %d", len(vs), max)
		}
		back := file(vs...)
		if !slices.Equal(back, data[:len(back)]) {
			t.Fatalf("written back %x, read from %x", back, data)
		}
		if (max <= 0 || len(vs) < max) && len(back) != len(data) {
			t.Fatalf("%d of %d bytes read and no error", len(back), len(data))
		}
		for i, v := range vs {
			if cap(v) != len(v) {
				t.Fatalf("vector %d: capacity %d, length %d", i, cap(v), len(v))
			}
		}
	})
}
