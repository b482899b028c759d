package membudget

import (
	"errors"
	"sync"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  bool
	}{
		{"0", 0, false},
		{"1048576", 1 << 20, false},
		{"512MiB", 512 << 20, false},
		{"2GiB", 2 << 30, false},
		{"2gib", 2 << 30, false},
		{"1.5GB", 1_500_000_000, false},
		{"10KB", 10_000, false},
		{"100B", 100, false},
		{" 3 MiB ", 3 << 20, false},
		{"-1", 0, true},
		{"lots", 0, true},
		{"12XB", 0, true},
		{"150%", 0, true},
		{"NaN", 0, true},
		{"1e30", 0, true},
	} {
		got, err := ParseSize(tc.in)
		if tc.err {
			if !errors.Is(err, ErrSize) {
				t.Errorf("ParseSize(%q) = %d, %v; want ErrSize", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	if p, err := ParseSize("50%"); err != nil || p <= 0 || p < DefaultLimit() {
		t.Errorf("ParseSize(50%%) = %d, %v; want half the memory, above the default quarter %d", p, err, DefaultLimit())
	}
}

// fakeCache is a cache of equal entries that evicts its oldest on demand.
type fakeCache struct {
	mu      sync.Mutex
	entries []int64
	acct    *Account
}

func (c *fakeCache) evict(need int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var freed int64
	for freed < need && len(c.entries) > 0 {
		n := c.entries[0]
		c.entries = c.entries[1:]
		c.acct.Release(n)
		c.acct.Evicted()
		freed += n
	}
	return freed
}

func (c *fakeCache) add(n int64) bool {
	if !c.acct.Reserve(n) {
		return false
	}
	c.mu.Lock()
	c.entries = append(c.entries, n)
	c.mu.Unlock()
	return true
}

func newFake(b *Budget, name string) *fakeCache {
	c := &fakeCache{}
	c.acct = b.Account(name, c.evict)
	return c
}

// TestBudgetSharedAndReclaimed: two caches share one limit; when the
// budget is full, a new entry takes the memory of the other cache's
// oldest entries; an entry larger than the limit is refused; Close gives
// the bytes back and keeps the counters.
func TestBudgetSharedAndReclaimed(t *testing.T) {
	b := New(1000)
	a, c := newFake(b, "a"), newFake(b, "c")
	for range 10 {
		if !a.add(100) {
			t.Fatal("an entry within the budget was refused")
		}
	}
	if b.Used() != 1000 || a.acct.Used() != 1000 {
		t.Fatalf("used %d (a %d), want 1000", b.Used(), a.acct.Used())
	}
	if !c.add(250) {
		t.Fatal("a full budget did not reclaim from the idle cache")
	}
	if b.Used() > b.Limit() || c.acct.Used() != 250 || a.acct.Used() != 700 {
		t.Fatalf("after reclaim: used %d, a %d, c %d; want ≤ 1000, 700, 250", b.Used(), a.acct.Used(), c.acct.Used())
	}
	if c.add(2000) {
		t.Fatal("an entry over the whole limit was kept")
	}
	a.acct.Hit()
	a.acct.Miss()
	a.acct.Miss()
	st := b.Stats()
	if len(st) != 2 || st[0].Name != "a" || st[0].Evictions != 3 || st[0].Bytes != 700 || st[1].Refused != 1 {
		t.Fatalf("stats %+v", st)
	}
	if r := st[0].HitRate(); r < 0.333 || r > 0.334 {
		t.Fatalf("hit rate %v, want 1/3", r)
	}
	a.acct.Close()
	if b.Used() != 250 {
		t.Fatalf("after close used %d, want 250", b.Used())
	}
	if st := b.Stats(); st[0].Name != "a" || st[0].Hits != 1 || st[0].Bytes != 0 {
		t.Fatalf("closed account's counters: %+v", st)
	}
	if a.acct.Reserve(1) {
		t.Fatal("a closed account reserved")
	}
	b.SetLimit(100) // shrink: c evicts down
	if b.Used() > 100 {
		t.Fatalf("after shrinking used %d > 100", b.Used())
	}
}

// TestBudgetConcurrent: many caches reserving and evicting at once never
// hold more than the limit, and the accounts add up to the total. Run
// with -race.
func TestBudgetConcurrent(t *testing.T) {
	b := New(10_000)
	var wg sync.WaitGroup
	caches := make([]*fakeCache, 6)
	for i := range caches {
		caches[i] = newFake(b, "c")
	}
	stop := make(chan struct{})
	over := make(chan int64, 1)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if u := b.Used(); u > b.Limit() {
				select {
				case over <- u:
				default:
				}
				return
			}
		}
	}()
	for i, c := range caches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 2000 {
				c.add(int64(50 + (i*7+j)%300))
			}
		}()
	}
	wg.Wait()
	close(stop)
	select {
	case u := <-over:
		t.Fatalf("used %d over the limit", u)
	default:
	}
	var sum int64
	for _, c := range caches {
		sum += c.acct.Used()
		var held int64
		for _, n := range c.entries {
			held += n
		}
		if held != c.acct.Used() {
			t.Fatalf("a cache holds %d bytes but is charged %d", held, c.acct.Used())
		}
	}
	if sum != b.Used() || sum > b.Limit() {
		t.Fatalf("accounts sum to %d, budget says %d (limit %d)", sum, b.Used(), b.Limit())
	}
}
