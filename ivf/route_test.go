package ivf

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parqdb/parqdb/internal/vecmath"
)

// fullRanking ranks every leaf of c by float32 distance to q, ties to the
// smaller cid.
func fullRanking(c *Centroids, q []float32) []int32 {
	d := make([]float32, c.NList)
	for cid := range c.NList {
		d[cid] = vecmath.L2Sq(q, c.Leaf(int32(cid)))
	}
	ids := make([]int32, c.NList)
	for i := range ids {
		ids[i] = int32(i)
	}
	slices.SortStableFunc(ids, func(a, b int32) int { return cmpDist(d[a], d[b]) })
	return ids
}

func TestRoute(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const dim = 16
	sample := clustered(rng, 4000, dim, 40, 0.3)
	c, _ := trainOrFatal(t, sample, dim, TrainConfig{NList: 120, Seed: 4})
	queries := randVecs(rng, 50, dim, 1)
	tests := []struct {
		name   string
		nprobe int
		opt    RouteOptions
		exact  bool // expect the exact top nprobe
	}{
		{"default 1", 1, RouteOptions{}, false},
		{"default 10", 10, RouteOptions{}, false},
		{"all roots", 7, RouteOptions{MinRoots: 1 << 20}, true},
		{"big factor", 5, RouteOptions{Factor: 1000}, true},
		{"nprobe above nlist", 500, RouteOptions{}, true},
		{"nprobe zero", 0, RouteOptions{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dst []int32
			for qi := 0; qi < len(queries); qi += dim {
				q := queries[qi : qi+dim]
				var n int
				dst, n = c.RouteWith(q, tt.nprobe, tt.opt, dst)
				want := min(max(tt.nprobe, 0), c.NList)
				if len(dst) != want {
					t.Fatalf("%d cids, want %d", len(dst), want)
				}
				if want > 0 && n < want {
					t.Fatalf("%d leaf distances computed for %d results", n, want)
				}
				seen := map[int32]bool{}
				for i, cid := range dst {
					if seen[cid] || cid < 0 || int(cid) >= c.NList {
						t.Fatalf("bad or repeated cid %d in %v", cid, dst)
					}
					seen[cid] = true
					if i > 0 && vecmath.L2Sq(q, c.Leaf(dst[i-1])) > vecmath.L2Sq(q, c.Leaf(cid)) {
						t.Fatalf("not nearest first: %v", dst)
					}
				}
				if tt.exact && !slices.Equal(dst, fullRanking(c, q)[:want]) {
					t.Fatalf("route %v, exact ranking %v", dst, fullRanking(c, q)[:want])
				}
			}
		})
	}
	if got := c.Route(queries[:dim], 3, nil); len(got) != 3 {
		t.Fatalf("Route = %v", got)
	}
}

// TestGloVe trains on the real GloVe sample (plain and cosine-normalised),
// checks exact assignment of every word, and measures routing overlap with
// the exact leaf ranking.
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
			for _, nprobe := range []int{1, 8, 32} {
				var hit, total, computed int
				var dst []int32
				for qi := 0; qi < 10000; qi += 50 {
					q := tt.data[qi*dim : (qi+1)*dim]
					var n int
					dst, n = c.RouteWith(q, nprobe, RouteOptions{}, dst)
					computed += n
					exact := fullRanking(c, q)[:nprobe]
					for _, cid := range dst {
						if slices.Contains(exact, cid) {
							hit++
						}
					}
					total += nprobe
				}
				overlap := float64(hit) / float64(total)
				t.Logf("nprobe %d: overlap with exact top-nprobe %.3f, %.0f leaf distances per query",
					nprobe, overlap, float64(computed)/200)
				if overlap < 0.8 {
					t.Errorf("nprobe %d: routing overlap %.3f below 0.8", nprobe, overlap)
				}
			}
		})
	}
}
