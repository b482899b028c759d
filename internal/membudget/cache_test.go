package membudget

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// cached returns the keys of 0..n-1 that c holds, without marking them.
func cached(c *Cache[int, int], n int) []int {
	var out []int
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range n {
		if c.mu.m[k] != nil {
			out = append(out, k)
		}
	}
	return out
}

func TestCacheClockOrder(t *testing.T) {
	c := NewCache[int, int](CacheConfig{MaxBytes: 30})
	for k := range 3 {
		if v, ok := c.Put(k, k*10, 10); !ok || v != k*10 {
			t.Fatalf("put %d: %d %v", k, v, ok)
		}
	}
	// 0 and 2 are used: 1 goes first.
	c.Get(0)
	c.Get(2)
	c.Put(3, 30, 10)
	if got := cached(c, 5); !slices.Equal(got, []int{0, 2, 3}) {
		t.Fatalf("after the fourth put: %v, want [0 2 3]", got)
	}
	// The hand stopped past 1, at 2 (still marked): 2 gets its second
	// chance, and 3, unused, goes.
	c.Put(4, 40, 10)
	if got := cached(c, 5); !slices.Equal(got, []int{0, 2, 4}) {
		t.Fatalf("after the fifth put: %v, want [0 2 4]", got)
	}
	// A second put of a cached key returns the cached value.
	if v, ok := c.Put(4, 99, 10); !ok || v != 40 {
		t.Fatalf("second put: %d %v, want the first value", v, ok)
	}
	// Over the bound, or closed: not kept.
	if v, ok := c.Put(7, 70, 31); ok || v != 70 {
		t.Fatalf("oversize put: %d %v", v, ok)
	}
	st := c.Stats()
	if st.Entries != 3 || st.Bytes != 30 || st.Hits != 2 || st.Misses != 0 {
		t.Fatalf("stats %+v", st)
	}
	c.Close()
	if _, ok := c.Put(8, 80, 1); ok || c.Bytes() != 0 {
		t.Fatalf("a closed cache kept an entry (%d bytes)", c.Bytes())
	}
}

func TestCacheMaxEntriesAndNewest(t *testing.T) {
	c := NewCache[int, int](CacheConfig{MaxBytes: math.MaxInt64, MaxEntries: 2})
	for k := range 5 {
		c.Put(k, k, 1)
	}
	if got := cached(c, 5); !slices.Equal(got, []int{3, 4}) {
		t.Fatalf("%v, want the newest two", got)
	}
	// An entry larger than the rest together evicts them all, not itself.
	d := NewCache[int, int](CacheConfig{MaxBytes: 10})
	d.Put(0, 0, 4)
	d.Put(1, 1, 4)
	d.Get(0)
	d.Get(1)
	if _, ok := d.Put(2, 2, 10); !ok {
		t.Fatal("an entry of MaxBytes was refused")
	}
	if got := cached(d, 3); !slices.Equal(got, []int{2}) {
		t.Fatalf("%v, want the new entry alone", got)
	}
	// Grow keeps its entry too, and reports an entry no longer cached.
	if !d.Grow(2, 0, func(v int) bool { return v == 2 }) || d.Grow(2, 1, func(int) bool { return true }) {
		t.Fatal("Grow within the bound refused, or Grow past it accepted")
	}
	d.SetMaxBytes(20)
	d.Put(3, 3, 5)
	if !d.Grow(3, 5, func(v int) bool { return v == 3 }) || d.Bytes() != 20 {
		t.Fatalf("Grow: %d bytes, want 20", d.Bytes())
	}
	if d.Grow(3, 1, func(v int) bool { return v == 4 }) {
		t.Fatal("Grow of a replaced value accepted")
	}
	if !d.Grow(3, 1, func(int) bool { return true }) || cached(d, 4)[0] != 3 || d.Bytes() != 11 {
		t.Fatalf("Grow evicted its own entry or kept too much: %v, %d bytes", cached(d, 4), d.Bytes())
	}
	if prev := d.SetMaxBytes(0); prev != 20 || d.Bytes() != 0 {
		t.Fatalf("SetMaxBytes(0): previous %d, %d bytes left", prev, d.Bytes())
	}
}

func TestSlotCache(t *testing.T) {
	b := New(100)
	c := NewSlotCache[string](CacheConfig{Name: "slots", Budget: b, MaxBytes: 50}, 4)
	if _, ok := c.Put(4, "x", 1); ok {
		t.Fatal("a key past the slots was kept")
	}
	if _, ok := c.Put(-1, "x", 1); ok {
		t.Fatal("a negative key was kept")
	}
	for k := int32(0); k < 4; k++ {
		c.Put(k, fmt.Sprint(k), 20)
	}
	if got := c.Bytes(); got != 40 || b.Used() != 40 {
		t.Fatalf("%d bytes, budget %d: want 40 (two entries)", got, b.Used())
	}
	if _, ok := c.Lookup(1); ok {
		t.Fatal("an evicted slot was found")
	}
	if v, ok := c.Get(3); !ok || v != "3" {
		t.Fatalf("slot 3: %q %v", v, ok)
	}
	c.Close()
	if b.Used() != 0 {
		t.Fatalf("%d bytes charged after Close", b.Used())
	}
	if st := b.Stats(); len(st) != 1 || st[0].Name != "slots" || st[0].Hits != 1 || st[0].Evictions != 2 {
		t.Fatalf("stats %+v", st)
	}
	var off *Cache[int32, string]
	if _, ok := off.Put(1, "x", 1); ok {
		t.Fatal("a nil cache kept an entry")
	}
	if _, ok := off.Get(1); ok || off.Bytes() != 0 {
		t.Fatal("a nil cache found an entry")
	}
}

// TestCacheSharesBudget: two caches on one budget give memory back to
// each other, the largest holder first, and their charges equal what they
// hold.
func TestCacheSharesBudget(t *testing.T) {
	b := New(100)
	a := NewCache[int, int](CacheConfig{Name: "a", Budget: b, MaxBytes: math.MaxInt64})
	z := NewCache[int, int](CacheConfig{Name: "z", Budget: b, MaxBytes: math.MaxInt64})
	for k := range 6 {
		a.Put(k, k, 10)
	}
	for k := range 4 {
		z.Put(k, k, 10)
	}
	if _, ok := z.Put(4, 4, 20); !ok {
		t.Fatal("the budget did not make room")
	}
	if a.Bytes() != 40 || z.Bytes() != 60 || b.Used() != 100 {
		t.Fatalf("a %d z %d used %d: want a to give back 20", a.Bytes(), z.Bytes(), b.Used())
	}
	if got := cached(a, 6); !slices.Equal(got, []int{2, 3, 4, 5}) {
		t.Fatalf("a holds %v: want its oldest evicted", got)
	}
	b.SetLimit(50)
	if b.Used() > 50 || a.Bytes()+z.Bytes() != b.Used() || a.acct.Used() != a.Bytes() || z.acct.Used() != z.Bytes() {
		t.Fatalf("after shrinking: a %d z %d used %d", a.Bytes(), z.Bytes(), b.Used())
	}
}

// TestCacheProperties runs random operations on caches of random bounds
// and checks after each one: within MaxBytes, MaxEntries and the budget,
// the account charged exactly the entries' bytes, a cached value is the
// first one put under its key, and without lookups the cached keys are
// the newest ones put (eviction is insertion order).
func TestCacheProperties(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 7))
		b := New(int64(50 + r.IntN(500)))
		maxBytes := int64(20 + r.IntN(400))
		maxEntries := r.IntN(3) * 8 // 0: none
		c := NewCache[int, int](CacheConfig{Name: "c", Budget: b, MaxBytes: maxBytes, MaxEntries: maxEntries})
		other := b.Account("other", nil)
		var held int64
		lookups := seed%2 == 0
		var order []int // keys in the order first put
		first := map[int]int{}
		for op := range 400 {
			k := r.IntN(60)
			switch x := r.IntN(10); {
			case x < 6:
				v := r.Int()
				got, ok := c.Put(k, v, int64(1+r.IntN(40)))
				if _, seen := first[k]; ok && !seen {
					first[k] = v
					order = append(order, k)
				}
				if ok && got != first[k] {
					t.Fatalf("seed %d op %d: put %d returned %d, first put %d", seed, op, k, got, first[k])
				}
			case x < 8 && lookups:
				if v, ok := c.Get(k); ok && v != first[k] {
					t.Fatalf("seed %d op %d: get %d = %d, want %d", seed, op, k, v, first[k])
				}
			case x < 9:
				c.Grow(k, int64(r.IntN(10)), func(v int) bool { return v == first[k] })
			default:
				if held > 0 && r.IntN(2) == 0 {
					other.Release(held)
					held = 0
				} else if n := int64(r.IntN(100)); other.Reserve(n) {
					held += n
				}
			}
			st := c.Stats()
			if st.Bytes > maxBytes || (maxEntries > 0 && st.Entries > maxEntries) || b.Used() > b.Limit() || c.acct.Used() != st.Bytes || b.Used() != st.Bytes+held {
				t.Fatalf("seed %d op %d: %+v, max %d/%d entries, budget %d of %d (other %d)", seed, op, st, maxBytes, maxEntries, b.Used(), b.Limit(), held)
			}
			// An evicted key put again is a new entry: track the live ones.
			have := cached(c, 60)
			for k := range first {
				if !slices.Contains(have, k) {
					delete(first, k)
					order = slices.DeleteFunc(order, func(x int) bool { return x == k })
				}
			}
			if !lookups && !slices.Equal(sortedCopy(order[len(order)-len(have):]), have) {
				t.Fatalf("seed %d op %d: cached %v, not the newest of %v", seed, op, have, order)
			}
		}
	}
}

func sortedCopy(s []int) []int { return slices.Sorted(slices.Values(s)) }

// TestCacheConcurrent puts, gets, grows and reclaims from many goroutines
// (run with -race): the budget is never exceeded and values stay those
// put.
func TestCacheConcurrent(t *testing.T) {
	b := New(2000)
	maps := NewCache[int, int](CacheConfig{Name: "m", Budget: b, MaxBytes: 1500, MaxEntries: 40})
	slots := NewSlotCache[int](CacheConfig{Name: "s", Budget: b, MaxBytes: 1500}, 64)
	other := b.Account("other", nil)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 3000 {
				k := r.IntN(64)
				switch r.IntN(5) {
				case 0:
					maps.Put(k, 3*k, int64(1+r.IntN(100)))
				case 1:
					slots.Put(int32(k), 5*k, int64(1+r.IntN(100)))
				case 2:
					if v, ok := maps.Get(k); ok && v != 3*k {
						errs <- fmt.Errorf("map key %d: %d", k, v)
						return
					}
					if v, ok := slots.Lookup(int32(k)); ok && v != 5*k {
						errs <- fmt.Errorf("slot %d: %d", k, v)
						return
					}
				case 3:
					maps.Grow(k, 5, func(v int) bool { return v == 3*k })
				default:
					if n := int64(r.IntN(300)); other.Reserve(n) {
						other.Release(n)
					}
				}
				if u := b.Used(); u > b.Limit() {
					errs <- fmt.Errorf("budget %d over %d", u, b.Limit())
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if m, s := maps.Stats(), slots.Stats(); m.Bytes > 1500 || m.Entries > 40 || s.Bytes > 1500 || m.Bytes+s.Bytes != b.Used() {
		t.Fatalf("maps %+v slots %+v budget %d", m, s, b.Used())
	}
	maps.Close()
	slots.Close()
	if b.Used() != 0 {
		t.Fatalf("%d bytes charged after Close", b.Used())
	}
}

// BenchmarkCacheLookup measures a hit: a slot cache's (the postings and
// vector stores', once per probed list: no lock) and a map cache's.
func BenchmarkCacheLookup(b *testing.B) {
	const n = 1024
	slots := NewSlotCache[*int](CacheConfig{MaxBytes: math.MaxInt64}, n)
	keyed := NewCache[int64, *int](CacheConfig{MaxBytes: math.MaxInt64})
	for k := range n {
		v := k
		slots.Put(int32(k), &v, 1)
		keyed.Put(int64(k), &v, 1)
	}
	b.Run("slots", func(b *testing.B) { benchLookup(b, slots, n) })
	b.Run("map", func(b *testing.B) { benchLookup(b, keyed, n) })
}

// benchLookup looks up the keys 0..n-1 of c in turn, each a hit.
func benchLookup[K int32 | int64](b *testing.B, c *Cache[K, *int], n int) {
	i := 0
	for b.Loop() {
		if _, ok := c.Lookup(K(i % n)); !ok {
			b.Fatal("miss")
		}
		i++
	}
}
