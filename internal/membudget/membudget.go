package membudget

import (
	"bufio"
	"cmp"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultFraction is the share of the machine's memory (or of the
// cgroup's memory limit, when lower) that Default may use when no
// --cache-size is given: a quarter, leaving room for the Go heap's own
// overhead, queries in flight and the page cache of the operating system.
const DefaultFraction = 0.25

// fallbackLimit is used when the machine's memory cannot be read.
const fallbackLimit = 1 << 30

// Default is the process-wide budget that indexes use unless told
// otherwise; its limit is DefaultLimit() until SetLimit changes it.
var Default = New(DefaultLimit())

// Budget bounds the bytes held by all its accounts together. It is safe
// for concurrent use.
type Budget struct {
	limit atomic.Int64
	used  atomic.Int64
	mu    struct {
		sync.Mutex
		accounts []*Account
		retired  map[string]Stats // counters of closed accounts, by name
	}
}

// New returns a budget of limit bytes (< 0 means 0: nothing is cached).
func New(limit int64) *Budget {
	b := &Budget{}
	b.limit.Store(max(limit, 0))
	return b
}

// Limit returns the bound in bytes.
func (b *Budget) Limit() int64 { return b.limit.Load() }

// Used returns the bytes charged to all accounts.
func (b *Budget) Used() int64 { return b.used.Load() }

// SetLimit changes the bound and, when it shrinks below what is held,
// asks the accounts to evict down to it. It returns the previous bound.
func (b *Budget) SetLimit(n int64) (previous int64) {
	prev := b.limit.Swap(max(n, 0))
	if over := b.used.Load() - b.Limit(); over > 0 {
		b.reclaim(over)
	}
	return prev
}

// Evictor frees at least need bytes of its cache if it can, releasing
// them through its Account, and returns the bytes it freed. It is called
// without the budget's locks held and must not call Reserve.
type Evictor func(need int64) (freed int64)

// Account is one cache's share of a Budget. Its methods are safe for
// concurrent use; Reserve must not be called while holding a lock that the
// account's own (or another account's) Evictor takes.
type Account struct {
	b     *Budget
	name  string
	evict Evictor

	used                    atomic.Int64
	hits, misses, evictions atomic.Int64
	refused                 atomic.Int64
	closed                  atomic.Bool
}

// Account registers a cache named name (several caches may share a name:
// their counters add up in Stats) whose evict frees memory on demand.
func (b *Budget) Account(name string, evict Evictor) *Account {
	a := &Account{b: b, name: name, evict: evict}
	b.mu.Lock()
	b.mu.accounts = append(b.mu.accounts, a)
	b.mu.Unlock()
	return a
}

// Close releases everything the account holds and unregisters it (its
// cache is being dropped); its counters stay in Stats.
func (a *Account) Close() {
	if a == nil || a.closed.Swap(true) {
		return
	}
	a.b.used.Add(-a.used.Swap(0))
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	a.b.mu.accounts = slices.DeleteFunc(a.b.mu.accounts, func(x *Account) bool { return x == a })
	if a.b.mu.retired == nil {
		a.b.mu.retired = map[string]Stats{}
	}
	a.b.mu.retired[a.name] = a.addTo(a.b.mu.retired[a.name])
}

// Reserve charges n bytes to the account if the budget allows, first
// asking the accounts to evict when it is full. It reports whether the
// bytes were charged; on false the caller must not keep the entry.
func (a *Account) Reserve(n int64) bool {
	if a == nil {
		return true
	}
	if n < 0 || a.closed.Load() || n > a.b.Limit() {
		a.refused.Add(1)
		return false
	}
	for try := 0; try < 2; try++ {
		if a.b.tryAdd(n) {
			a.used.Add(n)
			return true
		}
		if try == 0 {
			a.b.reclaim(a.b.used.Load() + n - a.b.Limit())
		}
	}
	a.refused.Add(1)
	return false
}

// Release returns n bytes charged with Reserve (an evicted entry).
func (a *Account) Release(n int64) {
	if a == nil || n == 0 || a.closed.Load() {
		return
	}
	a.used.Add(-n)
	a.b.used.Add(-n)
}

// Evicted counts one entry dropped to make room (for the statistics).
func (a *Account) Evicted() {
	if a != nil {
		a.evictions.Add(1)
	}
}

// Hit and Miss count a lookup that found its entry, or not.
func (a *Account) Hit() {
	if a != nil {
		a.hits.Add(1)
	}
}

// Miss counts a lookup that did not find its entry.
func (a *Account) Miss() {
	if a != nil {
		a.misses.Add(1)
	}
}

// Hits and Misses count n lookups at once (a query's, added once rather
// than one shared atomic add per lookup).
func (a *Account) Hits(n int64) {
	if a != nil {
		a.hits.Add(n)
	}
}

// Misses counts n lookups that did not find their entries.
func (a *Account) Misses(n int64) {
	if a != nil {
		a.misses.Add(n)
	}
}

// Used returns the bytes charged to the account.
func (a *Account) Used() int64 { return a.used.Load() }

// addTo adds the account's counters and bytes to s.
func (a *Account) addTo(s Stats) Stats {
	s.Name = a.name
	s.Hits += a.hits.Load()
	s.Misses += a.misses.Load()
	s.Evictions += a.evictions.Load()
	s.Refused += a.refused.Load()
	s.Bytes += a.used.Load()
	return s
}

func (b *Budget) tryAdd(n int64) bool {
	for {
		u := b.used.Load()
		if u+n > b.Limit() {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// reclaim asks the accounts, the largest holder first, to free need bytes
// in all: the cache holding the most gives back first, so a small cache
// that every query needs (postings keys) is not emptied for a large one.
func (b *Budget) reclaim(need int64) {
	if need <= 0 {
		return
	}
	b.mu.Lock()
	accs := slices.Clone(b.mu.accounts)
	b.mu.Unlock()
	slices.SortStableFunc(accs, func(x, y *Account) int { return cmp.Compare(y.used.Load(), x.used.Load()) })
	for _, a := range accs {
		if a.evict == nil || a.used.Load() == 0 {
			continue
		}
		if need -= a.evict(need); need <= 0 {
			return
		}
	}
}

// Stats is one cache's counters (summed over the accounts of that name).
type Stats struct {
	Name                             string
	Hits, Misses, Evictions, Refused int64
	Bytes                            int64
}

// HitRate returns Hits / (Hits + Misses), or 0 before any lookup.
func (s Stats) HitRate() float64 {
	if n := s.Hits + s.Misses; n > 0 {
		return float64(s.Hits) / float64(n)
	}
	return 0
}

// Stats returns the counters of the registered accounts by name, sorted
// by name.
func (b *Budget) Stats() []Stats {
	b.mu.Lock()
	accs := slices.Clone(b.mu.accounts)
	retired := maps.Clone(b.mu.retired)
	b.mu.Unlock()
	by := map[string]Stats{}
	for _, a := range accs {
		by[a.name] = a.addTo(by[a.name])
	}
	for name, r := range retired {
		s := by[name]
		s.Name = name
		s.Hits += r.Hits
		s.Misses += r.Misses
		s.Evictions += r.Evictions
		s.Refused += r.Refused
		by[name] = s
	}
	out := make([]Stats, 0, len(by))
	for _, s := range by {
		out = append(out, s)
	}
	slices.SortFunc(out, func(x, y Stats) int { return strings.Compare(x.Name, y.Name) })
	return out
}

// DefaultLimit returns DefaultFraction of the memory available to the
// process: the machine's (MemTotal in /proc/meminfo) or the cgroup v2
// limit (memory.max) when lower; 1 GiB where neither can be read.
func DefaultLimit() int64 {
	m := memTotal()
	if m <= 0 {
		return fallbackLimit
	}
	return int64(float64(m) * DefaultFraction)
}

func memTotal() int64 {
	var total int64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) >= 2 && fs[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(fs[1], 10, 64); err == nil {
					total = kb << 10
				}
				break
			}
		}
		f.Close()
	}
	if data, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil && n > 0 && (total == 0 || n < total) {
			total = n
		}
	}
	return total
}

// ParseSize parses a cache size: a byte count with an optional unit (B,
// KB, MB, GB, TB in powers of 1000; KiB, MiB, GiB, TiB in powers of 1024),
// or a percentage of the process's memory ("25%"). "0" disables caching.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if strings.HasSuffix(t, "%") {
		p, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
		if err != nil || p < 0 || p > 100 || math.IsNaN(p) {
			return 0, fmt.Errorf("%w %q: a percentage must be between 0%% and 100%%", ErrSize, s)
		}
		m := memTotal()
		if m <= 0 {
			m = fallbackLimit / DefaultFraction
		}
		return int64(float64(m) * p / 100), nil
	}
	units := []struct {
		suf string
		mul float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	mul := 1.0
	for _, u := range units {
		if strings.HasSuffix(strings.ToUpper(t), strings.ToUpper(u.suf)) && (u.suf != "B" || !strings.HasSuffix(strings.ToUpper(t), "IB")) {
			t, mul = strings.TrimSpace(t[:len(t)-len(u.suf)]), u.mul
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsNaN(v) || v*mul > math.MaxInt64/2 {
		return 0, fmt.Errorf("%w %q: want bytes with an optional unit (512MiB, 2GiB, 1.5GB) or a percentage of memory (25%%)", ErrSize, s)
	}
	return int64(v * mul), nil
}
