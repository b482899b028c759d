package query_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
)

// TestEveryCacheUnderOneBudget: two indexes open on the process budget
// (membudget.Default, as --cache-size sets it) shrunk to a third of one
// index's vectors, searched from several goroutines: the source encoding
// (postings and the exact-vector store, filled list by list), joined source columns (decoded pages and the joined-rows
// cache) and filters (the bitmap cache). Every cache — postings, vectors,
// pages, rows, filters — counts its lookups in the budget's statistics
// (what /metrics and --stats print) and charges what it holds, and the
// bytes charged never exceed the limit. Before the joined rows and the
// filter bitmaps were charged, neither appeared and their memory was
// outside the bound.
func TestEveryCacheUnderOneBudget(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, metadata.MetricL2Squared, metadata.EncodingSource, 40)
	b := membudget.Default
	const limit = gloveVectorBytes / 3
	defer b.SetLimit(b.SetLimit(limit))
	before := map[string]membudget.Stats{}
	for _, s := range b.Stats() {
		before[s.Name] = s
	}
	var ixs []*query.Index
	for range 2 {
		ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		ixs = append(ixs, ix)
	}
	var preds []*filter.Predicate
	for i := range 8 {
		p, err := filter.Parse(fmt.Sprintf("rank < %d", 1000*(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		preds = append(preds, p)
	}

	done := make(chan struct{})
	over := make(chan int64, 1)
	var mon sync.WaitGroup
	mon.Add(1)
	go func() {
		defer mon.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if u := b.Used(); u > b.Limit() {
				over <- u
				return
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ix := ixs[w%2]
			for qi := w; qi < 160; qi += 4 {
				// Queries repeat (qi % 40), so every cache sees hits too.
				opts := query.Options{K: 10, NProbe: 4}
				if qi%2 == 1 {
					opts.Filter = preds[qi%len(preds)]
				}
				res, err := ix.Search(ctx, f.vecs[(qi%40)*97], opts)
				if err == nil && (len(res.Hits) != 10 || res.Hits[0].Row["word"] == nil || res.Hits[0].Row["embedding"] == nil) {
					err = fmt.Errorf("query %d: %d hits, first row %v: want 10 joined rows", qi, len(res.Hits), res.Hits[0].Row)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	mon.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	select {
	case u := <-over:
		t.Fatalf("budget exceeded: %d > %d", u, limit)
	default:
	}
	after := map[string]membudget.Stats{}
	var sum int64
	for _, s := range b.Stats() {
		after[s.Name] = s
		sum += s.Bytes
	}
	if sum != b.Used() || b.Used() > limit {
		t.Fatalf("caches hold %d bytes, budget used %d of %d: %+v", sum, b.Used(), limit, b.Stats())
	}
	var evictions int64
	for _, name := range []string{"postings", "vectors", "pages", "rows", "filters"} {
		a, o := after[name], before[name]
		hits, misses := a.Hits-o.Hits, a.Misses-o.Misses
		evictions += a.Evictions - o.Evictions
		if hits == 0 || misses == 0 {
			t.Errorf("cache %q: %d hits, %d misses during the run: want both (every cache under the budget, counted)", name, hits, misses)
		}
		if a.Bytes == 0 && a.Evictions == o.Evictions {
			t.Errorf("cache %q: holds nothing and evicted nothing: its entries are not charged to the budget", name)
		}
	}
	if evictions == 0 {
		t.Errorf("no cache evicted anything at %d bytes: the test puts no pressure on the budget", limit)
	}
	for _, ix := range ixs {
		ix.Close()
	}
	for _, name := range []string{"rows", "filters"} {
		if after := b.Stats(); statsOf(after, name).Bytes != 0 {
			t.Errorf("cache %q still holds %d bytes after both indexes closed", name, statsOf(after, name).Bytes)
		}
	}
}

func statsOf(st []membudget.Stats, name string) membudget.Stats {
	for _, s := range st {
		if s.Name == name {
			return s
		}
	}
	return membudget.Stats{}
}

// TestFiltersAndRowsWithoutRoom: on a budget with no room at all, a
// filtered search with joined columns keeps neither its bitmap nor its
// rows, and still answers exactly as on an index with room for both.
func TestFiltersAndRowsWithoutRoom(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, metadata.MetricL2Squared, metadata.EncodingLVQ8, 40)
	none := membudget.New(0)
	tight, err := query.Open(ctx, f.env, "words", query.OpenOptions{Budget: none})
	if err != nil {
		t.Fatal(err)
	}
	defer tight.Close()
	roomy, err := query.Open(ctx, f.env, "words", query.OpenOptions{Budget: membudget.New(1 << 30)})
	if err != nil {
		t.Fatal(err)
	}
	defer roomy.Close()
	p, err := filter.Parse("rank < 3000")
	if err != nil {
		t.Fatal(err)
	}
	for qi := range 6 {
		opts := query.Options{K: 10, NProbe: 8, Filter: p, Columns: []string{"word", "rank"}}
		got, err := tight.Search(ctx, f.vecs[(qi%3)*331], opts)
		if err != nil {
			t.Fatal(err)
		}
		want, err := roomy.Search(ctx, f.vecs[(qi%3)*331], opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Hits) != len(want.Hits) || len(got.Hits) == 0 {
			t.Fatalf("query %d: %d hits, want %d", qi, len(got.Hits), len(want.Hits))
		}
		for i := range want.Hits {
			g, w := got.Hits[i], want.Hits[i]
			if g.Row["word"] != w.Row["word"] || g.Row["rank"] != w.Row["rank"] || g.Distance != w.Distance {
				t.Fatalf("query %d hit %d: %v %v, want %v %v", qi, i, g.Row, g.Distance, w.Row, w.Distance)
			}
		}
	}
	if none.Used() != 0 {
		t.Fatalf("a budget of 0 holds %d bytes", none.Used())
	}
	if s := statsOf(none.Stats(), "filters"); s.Misses != 6 || s.Refused != 6 {
		t.Fatalf("filters on a budget of 0: %+v, want 6 misses, 6 refused (nothing kept)", s)
	}
}

// TestFilterExactPlanCharged: the exact plan's contiguous copies of its
// rows' vectors and codes are charged to the process budget with the
// bitmap, so the budget's "filters" account holds exactly what the filter
// cache counts (before, the copies were counted by the cache but never
// reserved, and evicting the entry released more than was reserved).
func TestFilterExactPlanCharged(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, metadata.MetricL2Squared, metadata.EncodingLVQ8, 40)
	b := membudget.New(1 << 30)
	ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	p, err := filter.Parse("rank < 150")
	if err != nil {
		t.Fatal(err)
	}
	for qi := range 3 {
		if _, err := ix.Search(ctx, f.vecs[qi*331], query.Options{K: 10, Filter: p, NoRows: true}); err != nil {
			t.Fatal(err)
		}
	}
	if query.ExactPlanVectors(ix, p) == 0 {
		t.Fatal("the exact plan kept no contiguous vectors: the test does not exercise them")
	}
	if got, want := statsOf(b.Stats(), "filters").Bytes, query.FilterCacheBytes(ix); got != want || got == 0 {
		t.Fatalf("budget account filters holds %d bytes, the filter cache counts %d", got, want)
	}
}
