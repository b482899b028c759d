package source

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/membudget"
)

// int64Page returns a decoded page of n int64 values.
func int64Page(t *testing.T, n int) parquet.Page {
	t.Helper()
	buf := parquet.Int64Type.NewColumnBuffer(0, n)
	vals := make([]parquet.Value, n)
	for i := range vals {
		vals[i] = parquet.Int64Value(int64(i))
	}
	if _, err := buf.WriteValues(vals); err != nil {
		t.Fatal(err)
	}
	return buf.Page()
}

func TestPageCacheEviction(t *testing.T) {
	p := int64Page(t, 100) // 800 bytes + overhead
	size := p.Size() + pageEntryOverhead
	key := func(i int) pageKey { return pageKey{page: i} }
	t.Run("clock", func(t *testing.T) {
		c := newPageCache(10*size, nil)
		for i := range 10 {
			c.put(key(i), p)
		}
		if n, used := c.stats(); n != 10 || used != 10*size {
			t.Fatalf("after 10 puts: %d pages, %d bytes", n, used)
		}
		if _, ok := c.get(key(0)); !ok { // 0 is used: it gets a second chance, 1 goes
			t.Fatal("page 0 missing")
		}
		c.put(key(10), p)
		if _, ok := c.get(key(1)); ok {
			t.Error("the oldest unused page 1 survived")
		}
		for _, i := range []int{0, 2, 9, 10} {
			if _, ok := c.get(key(i)); !ok {
				t.Errorf("page %d evicted", i)
			}
		}
		if n, used := c.stats(); n != 10 || used > 10*size {
			t.Fatalf("bound exceeded: %d pages, %d bytes", n, used)
		}
		c.put(key(2), p) // repeat put does not double-count
		if _, used := c.stats(); used != 10*size {
			t.Errorf("repeat put: %d bytes", used)
		}
	})
	t.Run("shrink", func(t *testing.T) {
		c := newPageCache(10*size, nil)
		for i := range 10 {
			c.put(key(i), p)
		}
		if prev := c.setMax(3 * size); prev != 10*size {
			t.Errorf("previous bound %d", prev)
		}
		if n, _ := c.stats(); n != 3 {
			t.Errorf("after shrink: %d pages", n)
		}
		for _, i := range []int{7, 8, 9} {
			if _, ok := c.get(key(i)); !ok {
				t.Errorf("recent page %d evicted", i)
			}
		}
		c.setMax(0)
		if n, used := c.stats(); n != 0 || used != 0 {
			t.Errorf("disabled cache holds %d pages, %d bytes", n, used)
		}
		c.put(key(1), p)
		if n, _ := c.stats(); n != 0 {
			t.Error("disabled cache accepted a page")
		}
	})
	t.Run("oversize", func(t *testing.T) {
		c := newPageCache(3*size, nil) // a page is more than a quarter
		c.put(key(0), p)
		if n, _ := c.stats(); n != 0 {
			t.Error("page larger than a quarter of the bound was cached")
		}
	})
}

// readAll reads locs with every column and returns the rows as maps.
func readAll(t *testing.T, st *Table, locs []RowLoc) []map[string]any {
	t.Helper()
	got, err := st.ReadRows(context.Background(), locs, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]any, len(locs))
	for i := range locs {
		if out[i], err = got.Map(i); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func randLocs(r *rand.Rand, n int) []RowLoc {
	locs := make([]RowLoc, n)
	for i := range locs {
		fi := []int32{0, 2}[r.IntN(2)]
		locs[i] = RowLoc{fi, int64(r.IntN([]int{40, 0, 55}[fi]))}
	}
	return locs
}

func TestReadRowsColdWarm(t *testing.T) {
	prev := SetPageCacheBytes(SuggestedPageCacheBytes)
	t.Cleanup(func() { SetPageCacheBytes(prev) })
	b := newMem()
	want := multiFile(t, b, 6)
	st := mustOpen(t, b, "m")
	locs := randLocs(rand.New(rand.NewPCG(1, 2)), 50)
	SetPageCacheBytes(0)
	cold := readAll(t, st, locs)
	for i, loc := range locs {
		if w := want[loc]; !sameValue(cold[i]["title"], w[0]) || !sameValue(cold[i]["emb"], w[2]) || !sameValue(cold[i]["tags"], w[4]) {
			t.Fatalf("loc %v: %v, want %v", loc, cold[i], w)
		}
	}
	SetPageCacheBytes(SuggestedPageCacheBytes)
	before, _ := decodedPages.stats()
	first := readAll(t, st, locs)
	after, _ := decodedPages.stats()
	if after <= before {
		t.Fatalf("reading cached no pages (%d → %d): the offset-index path was not taken", before, after)
	}
	reads := b.reads
	warm := readAll(t, st, locs)
	if b.reads != reads {
		t.Errorf("warm read fetched %d bytes; want every page from the cache", b.reads-reads)
	}
	if !reflect.DeepEqual(cold, first) || !reflect.DeepEqual(cold, warm) {
		t.Fatal("cold and warm reads differ")
	}
}

// TestReadRowsConcurrentCache reads from many goroutines through a cache
// small enough to evict all the time; run it with -race.
func TestReadRowsConcurrentCache(t *testing.T) {
	prev := SetPageCacheBytes(4 << 10)
	t.Cleanup(func() { SetPageCacheBytes(prev) })
	b := newMem()
	multiFile(t, b, 6)
	st := mustOpen(t, b, "m")
	var sets [][]RowLoc
	var wants [][]map[string]any
	r := rand.New(rand.NewPCG(3, 4))
	for range 8 {
		locs := randLocs(r, 10)
		sets = append(sets, locs)
		wants = append(wants, readAll(t, st, locs))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for it := range 20 {
				i := (g + it) % len(sets)
				got, err := st.ReadRows(context.Background(), sets[i], nil)
				if err != nil {
					errs <- err
					return
				}
				for j := range sets[i] {
					m, err := got.Map(j)
					if err != nil || !reflect.DeepEqual(m, wants[i][j]) {
						errs <- fmt.Errorf("goroutine %d set %d row %d: %v, want %v (%v)", g, i, j, m, wants[i][j], err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if _, used := decodedPages.stats(); used > 4<<10 {
		t.Errorf("cache holds %d bytes over its 4 KiB bound", used)
	}
}

// TestPageCacheSharesBudget: the page cache charges the process budget;
// its pages are given back when another cache needs the memory, and it
// takes memory back from that cache in turn; the budget is never
// exceeded and the charges equal what each holds.
func TestPageCacheSharesBudget(t *testing.T) {
	p := int64Page(t, 100)
	size := p.Size() + pageEntryOverhead
	b := membudget.New(4 * size)
	c := newPageCache(100*size, b)
	for i := range 4 {
		c.put(pageKey{page: i}, p)
	}
	if _, used := c.stats(); used != 4*size || b.Used() != 4*size {
		t.Fatalf("page cache %d bytes, budget %d; want %d", used, b.Used(), 4*size)
	}
	// Another cache takes two pages' worth: the oldest pages go.
	other := b.Account("other", nil)
	if !other.Reserve(2 * size) {
		t.Fatal("the page cache did not give memory back")
	}
	if n, used := c.stats(); n != 2 || used != 2*size || b.Used() != 4*size {
		t.Fatalf("after reclaim: %d pages, %d bytes, budget %d", n, used, b.Used())
	}
	if _, ok := c.get(pageKey{page: 0}); ok {
		t.Fatal("the oldest page survived the reclaim")
	}
	if _, ok := c.get(pageKey{page: 3}); !ok {
		t.Fatal("the most recent page was reclaimed")
	}
	// The other cache cannot be asked (no evictor): a new page beyond the
	// budget makes the page cache evict its own.
	c.put(pageKey{page: 9}, p)
	st := b.Stats()
	if n, used := c.stats(); b.Used() > b.Limit() || used != st[1].Bytes || n != 2 {
		t.Fatalf("budget %d of %d, page cache %d pages %d bytes charged %d", b.Used(), b.Limit(), n, used, st[1].Bytes)
	}
	if st[1].Name != "pages" || st[1].Hits != 1 || st[1].Misses != 1 || st[1].Evictions != 3 {
		t.Fatalf("stats %+v", st)
	}
}
