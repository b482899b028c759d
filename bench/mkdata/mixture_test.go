package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestMixtureNormalize: -normalize writes unit-length rows (base .fvecs
// and queries) under the -unit names, -d is honoured, and the same flags
// give the same bytes; without it rows keep their length.
func TestMixtureNormalize(t *testing.T) {
	for _, tc := range []struct {
		normalize bool
		d         int
		stem      string
		unit      bool
	}{
		{true, 384, "mixture-3000x384-unit", true},
		{false, 384, "mixture-3000x384", false},
		{true, 8, "mixture-3000x8-unit", true},
	} {
		t.Run(tc.stem, func(t *testing.T) {
			var outs [2][]byte
			for run := range outs {
				dir := t.TempDir()
				m := mixture{n: 3000, d: tc.d, k: 50, files: 3, q: 20, seed: 7, fvecs: true, normalize: tc.normalize}
				if err := m.write(dir); err != nil {
					t.Fatal(err)
				}
				for _, f := range []string{tc.stem + ".fvecs", tc.stem + "-queries.fvecs"} {
					data, err := os.ReadFile(filepath.Join(dir, f))
					if err != nil {
						t.Fatal(err)
					}
					rec := 4 * (tc.d + 1)
					if len(data)%rec != 0 || len(data) == 0 {
						t.Fatalf("%s: %d bytes, not rows of dimension %d", f, len(data), tc.d)
					}
					for off := 0; off < len(data); off += rec {
						if d := binary.LittleEndian.Uint32(data[off:]); int(d) != tc.d {
							t.Fatalf("%s row %d: dimension %d, want %d", f, off/rec, d, tc.d)
						}
						var s float64
						for j := 0; j < tc.d; j++ {
							x := math.Float32frombits(binary.LittleEndian.Uint32(data[off+4+4*j:]))
							s += float64(x) * float64(x)
						}
						if isUnit := math.Abs(math.Sqrt(s)-1) < 1e-5; isUnit != tc.unit {
							t.Fatalf("%s row %d: length %g, want unit %v", f, off/rec, math.Sqrt(s), tc.unit)
						}
					}
					outs[run] = append(outs[run], data...)
				}
				if _, err := os.Stat(filepath.Join(dir, "base", tc.stem+"-part-02-of-03.parquet")); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(outs[0], outs[1]) {
				t.Fatal("two runs with the same flags differ")
			}
		})
	}
}
