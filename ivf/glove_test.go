package ivf

import (
	"slices"
	"testing"
)

// TestGloVe trains on the real GloVe sample (plain and cosine-normalised)
// and checks exact assignment of every word. Routing is the query
// package's (query/route.go), tested there.
func TestGloVe(t *testing.T) {
	words, vecs, dim := loadGloVe(t)
	if len(words) != 10000 || len(vecs) != 10000*dim {
		t.Fatalf("%d words, %d floats", len(words), len(vecs))
	}
	cosine := slices.Clone(vecs)
	normalizeRows(cosine, dim)
	tests := []struct {
		name  string
		data  []float32
		nlist int
	}{
		{"l2 nlist 100", vecs, 100},
		{"cosine nlist 400", cosine, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rep := trainOrFatal(t, tt.data, dim, TrainConfig{NList: tt.nlist, Seed: 7, Workers: 2})
			checkCentroids(t, c, tt.nlist, dim)
			if rep.Flat {
				t.Fatalf("unexpected flat fallback: %+v", rep)
			}
			st := checkAssign(t, c, tt.data)
			t.Logf("assign stats %+v (brute force would be %d)", st, 3*10000*tt.nlist)
			// Clusters are used: no leaf may stay without words.
			out := make([]int32, 10000)
			NewAssigner(c).AssignBatch(tt.data, out)
			sizes := make([]int, tt.nlist)
			for _, cid := range out {
				sizes[cid]++
			}
			if slices.Contains(sizes, 0) {
				t.Errorf("some leaves own no word: %v", sizes)
			}
		})
	}
}
