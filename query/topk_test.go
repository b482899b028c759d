package query

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// keyedList returns a list of n rows whose keys are distinct byte strings
// in an order unrelated to the row numbers.
func keyedList(r *rand.Rand, n int) *list {
	l := &list{}
	for _, p := range r.Perm(n) {
		l.batch.Keys = fmt.Appendf(l.batch.Keys, "k%06d", p)
		l.batch.KeyEnds = append(l.batch.KeyEnds, len(l.batch.Keys))
	}
	return l
}

// randomCands offers n candidates of two lists with distances drawn from
// few values (many ties, decided by key) or from many.
func randomCands(r *rand.Rand, n int) []cand {
	ls := []*list{keyedList(r, n), keyedList(r, n)}
	distinct := []int{1, 3, 20, 1 << 20}[r.IntN(4)]
	cs := make([]cand, n)
	for i := range cs {
		l := r.IntN(2)
		cs[i] = cand{dist: float32(r.IntN(distinct)) / 8, i: int32(i), l: ls[l]}
	}
	// keys are unique within a list; make them unique across the two
	// by prefixing the second list's keys
	for i := range ls[1].batch.Keys {
		if ls[1].batch.Keys[i] == 'k' {
			ls[1].batch.Keys[i] = 'j'
		}
	}
	return cs
}

func sameCands(a, b []cand) bool {
	return slices.EqualFunc(a, b, func(x, y cand) bool { return x.dist == y.dist && x.i == y.i && x.l == y.l })
}

// TestSelectCands: after selectCands(h, n), h[:n] holds the n first of a
// sort of h (as a set) and h[n-1] is the n-th, for random inputs with and
// without ties.
func TestSelectCands(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 3))
	for trial := range 3000 {
		n := 1 + r.IntN([]int{4, 40, 300}[trial%3])
		cs := randomCands(r, n)
		want := slices.SortedFunc(slices.Values(cs), compareCand)
		k := 1 + r.IntN(n)
		selectCands(cs, k)
		if !sameCands(cs[k-1:k], want[k-1:k]) {
			t.Fatalf("trial %d (n %d, k %d): h[k-1] = %+v, want %+v", trial, n, k, cs[k-1], want[k-1])
		}
		got := slices.SortedFunc(slices.Values(cs[:k]), compareCand)
		if !sameCands(got, want[:k]) {
			t.Fatalf("trial %d (n %d, k %d): selected %v, want %v", trial, n, k, got, want[:k])
		}
	}
}

// TestTopKMatchesSort: offering candidates the way the scoring loops do
// (skipped when farther than threshold, then push) keeps exactly the k
// first of a sort of all of them; sorted returns them in that order.
func TestTopKMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 4))
	var tk topK
	for trial := range 2000 {
		n := r.IntN([]int{5, 100, 2000}[trial%3])
		cs := randomCands(r, n)
		k := 1 + r.IntN([]int{3, 20, 150}[r.IntN(3)])
		tk.reset(k)
		for _, c := range cs {
			if c.dist > tk.threshold() {
				continue
			}
			tk.push(c)
		}
		want := slices.SortedFunc(slices.Values(cs), compareCand)
		want = want[:min(k, n)]
		if tk.full() != (n >= k) {
			t.Fatalf("trial %d (n %d, k %d): full = %v", trial, n, k, tk.full())
		}
		var got []cand
		if trial%2 == 0 {
			got = slices.SortedFunc(slices.Values(tk.best()), compareCand)
		} else {
			got = tk.sorted()
		}
		if !sameCands(got, want) {
			t.Fatalf("trial %d (n %d, k %d): kept %v, want %v", trial, n, k, got, want)
		}
	}
}

// TestKthFloat: kthFloat returns the n-th value of a sort, with ties.
func TestKthFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 5))
	for trial := range 3000 {
		m := 1 + r.IntN([]int{5, 50, 500}[trial%3])
		distinct := []int{1, 2, 10, 1 << 20}[r.IntN(4)]
		a := make([]float32, m)
		for i := range a {
			a[i] = float32(r.IntN(distinct)) - 3
		}
		want := slices.Sorted(slices.Values(a))
		n := 1 + r.IntN(m)
		if got := kthFloat(a, n); got != want[n-1] {
			t.Fatalf("trial %d (len %d): %d-th = %v, want %v", trial, m, n, got, want[n-1])
		}
	}
}

// BenchmarkTopK offers the candidates of one simulated query (12 lists of
// 100 rows, later lists a little farther) as the scoring loops do.
func BenchmarkTopK(b *testing.B) {
	r := rand.New(rand.NewPCG(14, 6))
	l := keyedList(r, 100)
	ds := make([]float32, 1200)
	for i := range ds {
		ds[i] = r.Float32() + 0.02*float32(i/100)
	}
	for _, k := range []int{10, 18, 40} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			var tk topK
			for b.Loop() {
				tk.reset(k)
				for i, d := range ds {
					if d > tk.threshold() {
						continue
					}
					tk.push(cand{dist: d, i: int32(i % 100), l: l})
				}
				tk.best()
			}
		})
	}
}

// heapTopK is the bounded max-heap that topK replaced, kept as the
// benchmark's reference.
type heapTopK struct {
	k int
	h []cand
}

func (t *heapTopK) threshold() float32 {
	if len(t.h) < t.k {
		return float32(math.Inf(1))
	}
	return t.h[0].dist
}

func (t *heapTopK) push(c cand) {
	if len(t.h) < t.k {
		t.h = append(t.h, c)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !lessCand(t.h[p], t.h[i]) {
				break
			}
			t.h[p], t.h[i] = t.h[i], t.h[p]
			i = p
		}
		return
	}
	if !lessCand(c, t.h[0]) {
		return
	}
	t.h[0] = c
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(t.h) && lessCand(t.h[m], t.h[l]) {
			m = l
		}
		if r < len(t.h) && lessCand(t.h[m], t.h[r]) {
			m = r
		}
		if m == i {
			return
		}
		t.h[m], t.h[i] = t.h[i], t.h[m]
		i = m
	}
}

func BenchmarkTopKHeap(b *testing.B) {
	r := rand.New(rand.NewPCG(14, 6))
	l := keyedList(r, 100)
	ds := make([]float32, 1200)
	for i := range ds {
		ds[i] = r.Float32() + 0.02*float32(i/100)
	}
	for _, k := range []int{10, 18, 40} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			var tk heapTopK
			for b.Loop() {
				tk.k, tk.h = k, tk.h[:0]
				for i, d := range ds {
					if d > tk.threshold() {
						continue
					}
					tk.push(cand{dist: d, i: int32(i % 100), l: l})
				}
			}
		})
	}
}

// TestTopKNearBound: offering candidates through pushNear, skipping those
// farther than nearBound, keeps exactly the k first of a sort of all of
// them, and nearBound is then the k-th smallest distance offered (or the
// threshold while fewer than k were).
func TestTopKNearBound(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 1))
	var tk topK
	for trial := range 2000 {
		n := r.IntN([]int{5, 100, 2000}[trial%3])
		cs := randomCands(r, n)
		k := 1 + r.IntN([]int{3, 20, 150}[r.IntN(3)])
		tk.reset(k)
		var offered []float32
		for _, c := range cs {
			if c.dist > tk.nearBound() {
				continue
			}
			tk.pushNear(c)
			offered = append(offered, c.dist)
		}
		want := slices.SortedFunc(slices.Values(cs), compareCand)[:min(k, n)]
		if got := tk.sorted(); !sameCands(got, want) {
			t.Fatalf("trial %d (n %d, k %d): kept %v, want %v", trial, n, k, got, want)
		}
		slices.Sort(offered)
		if len(offered) >= k {
			if b := tk.nearBound(); b > offered[k-1] {
				t.Fatalf("trial %d (n %d, k %d): nearBound %v above the k-th offered %v", trial, n, k, b, offered[k-1])
			}
		} else if tk.nearBound() != tk.threshold() {
			t.Fatalf("trial %d: nearBound %v with %d of k %d offered, threshold %v", trial, tk.nearBound(), len(offered), k, tk.threshold())
		}
	}
}
