package serving

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/query"
)

// PoolOptions tune a Pool. The zero value selects every default.
type PoolOptions struct {
	// RefreshInterval is how often the catalog is polled for newly
	// committed snapshots of the opened indexes (default
	// DefaultRefreshInterval; negative disables polling, for tests that
	// call Refresh themselves).
	RefreshInterval time.Duration
	// MaxPinned bounds how many explicitly requested (non-current)
	// snapshots stay open at once (default 4).
	MaxPinned int
	// CacheBytes and VectorCacheBytes are passed to query.Open for every
	// snapshot (0: query's defaults).
	CacheBytes, VectorCacheBytes int64
	// Logger receives refresh events (default slog.Default()).
	Logger *slog.Logger
}

// DefaultRefreshInterval is how often a Pool polls the catalog by default:
// a committed snapshot is served at most this long (plus the time to open
// it) after its commit.
const DefaultRefreshInterval = 2 * time.Second

// Pool holds the opened snapshots of the indexes in one warehouse and
// catalog. It is safe for concurrent use.
//
// The current snapshot of an index is opened on first use. Refresh (run
// every RefreshInterval by Run) loads each opened index's catalog entry;
// when its metadata location changed it opens the new current snapshot
// while the old one keeps serving, then swaps them: requests that started
// before the swap finish on the old snapshot, which is closed when the
// last of them releases it. A failed open keeps the old snapshot serving.
type Pool struct {
	env  query.Env
	opts PoolOptions
	log  *slog.Logger

	closed atomic.Bool
	mu     struct {
		sync.Mutex
		slots  map[string]*slot
		pinned map[pinKey]*list.Element // values *pinEntry
		lru    *list.List
	}

	open      atomic.Int64 // open snapshots (including retiring ones)
	hits      atomic.Int64
	misses    atomic.Int64
	refreshOK atomic.Int64
	refreshKO atomic.Int64
}

// PoolStats are a Pool's counters.
type PoolStats struct {
	OpenSnapshots   int64 // snapshots open now, including ones retiring
	Hits, Misses    int64 // Acquire served by an open snapshot / had to open one
	Refreshes       int64 // snapshot swaps after a catalog change
	RefreshFailures int64 // failed opens of a newly committed snapshot
}

// slot is one index's current snapshot. mu serialises first opens of the
// index and swaps.
type slot struct {
	name string
	mu   sync.Mutex
	cur  *handle
}

type pinKey struct {
	name     string
	uuid     string
	snapshot int64
}

type pinEntry struct {
	key pinKey
	h   *handle
}

// handle is one opened snapshot with a reference count.
type handle struct {
	ix    *query.Index
	pool  *Pool
	state atomic.Value // a front end's state for this snapshot (Lease.State)
	// staleErr is the first moved-file error a recheck logged (once).
	staleErr atomic.Pointer[error]
	mu       sync.Mutex
	refs     int
	gone     bool // retired: close when refs reaches 0
}

func (h *handle) acquire() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gone {
		return false
	}
	h.refs++
	return true
}

func (h *handle) release() {
	h.mu.Lock()
	h.refs--
	last := h.gone && h.refs == 0
	h.mu.Unlock()
	if last {
		h.close()
	}
}

// retire marks h for closing once no request holds it.
func (h *handle) retire() {
	h.mu.Lock()
	if h.gone {
		h.mu.Unlock()
		return
	}
	h.gone = true
	last := h.refs == 0
	h.mu.Unlock()
	if last {
		h.close()
	}
}

func (h *handle) close() {
	h.pool.open.Add(-1)
	if err := h.ix.Close(); err != nil {
		h.pool.log.Warn("close snapshot", "index", h.ix.Name(), "snapshot", h.ix.Snapshot().SnapshotID, "err", err)
	}
}

// Lease is a reference to an opened snapshot. Its Index stays open until
// Release; call Release exactly once.
type Lease struct {
	h    *handle
	once sync.Once
}

// Index returns the leased snapshot. It must not be closed by the caller.
func (l *Lease) Index() *query.Index { return l.h.ix }

// State is a value a front end keeps with the leased snapshot, shared by
// every lease of it and dropped with it (the HTTP API keeps its last row
// encoder there). It is safe for concurrent use; what is stored must
// always have the same type.
func (l *Lease) State() *atomic.Value { return &l.h.state }

// Release returns the lease.
func (l *Lease) Release() { l.once.Do(l.h.release) }

// NewPool returns an empty pool over env. Call Run to poll for new
// snapshots and Close to release everything.
func NewPool(env query.Env, opts PoolOptions) *Pool {
	if opts.RefreshInterval == 0 {
		opts.RefreshInterval = DefaultRefreshInterval
	}
	if opts.MaxPinned <= 0 {
		opts.MaxPinned = 4
	}
	p := &Pool{env: env, opts: opts, log: opts.Logger}
	if p.log == nil {
		p.log = slog.Default()
	}
	p.mu.slots = map[string]*slot{}
	p.mu.pinned = map[pinKey]*list.Element{}
	p.mu.lru = list.New()
	return p
}

// Stats returns the pool's counters.
func (p *Pool) Stats() PoolStats {
	return PoolStats{
		OpenSnapshots: p.open.Load(), Hits: p.hits.Load(), Misses: p.misses.Load(),
		Refreshes: p.refreshOK.Load(), RefreshFailures: p.refreshKO.Load(),
	}
}

// Catalog returns the pool's catalog.
func (p *Pool) Catalog() catalog.Catalog { return p.env.Catalog }

func (p *Pool) slot(name string) (*slot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Load() {
		return nil, ErrClosed
	}
	s := p.mu.slots[name]
	if s == nil {
		s = &slot{name: name}
		p.mu.slots[name] = s
	}
	return s, nil
}

func (p *Pool) openIndex(ctx context.Context, name string, snapshot int64) (*handle, error) {
	// The snapshot outlives the request that opens it, and storage
	// objects may keep the context they were opened with (S3 does), so
	// open it with a context that is never cancelled.
	ctx = context.WithoutCancel(ctx)
	ix, err := query.Open(ctx, p.env, name, query.OpenOptions{
		SnapshotID: snapshot, CacheBytes: p.opts.CacheBytes, VectorCacheBytes: p.opts.VectorCacheBytes,
	})
	if err != nil {
		return nil, err
	}
	p.open.Add(1)
	if st := ix.Stale(); st != nil {
		p.log.Warn("index is stale", "index", name, "reason", st.String())
	}
	return &handle{ix: ix, pool: p}, nil
}

// Acquire returns a lease on index name's current snapshot (snapshot 0)
// or on a retained snapshot, opening it if needed. A non-current snapshot
// is served only when it reads the source the catalog binds to the index
// (ErrSourceNotBound otherwise).
func (p *Pool) Acquire(ctx context.Context, name string, snapshot int64) (*Lease, error) {
	if err := catalog.CheckName(name); err != nil {
		return nil, err
	}
	cur, err := p.acquireCurrent(ctx, name)
	if err != nil {
		return nil, err
	}
	if snapshot == 0 || snapshot == cur.Index().Snapshot().SnapshotID {
		return cur, nil
	}
	defer cur.Release()
	return p.acquirePinned(ctx, cur.Index(), snapshot)
}

func (p *Pool) acquireCurrent(ctx context.Context, name string) (*Lease, error) {
	s, err := p.slot(name)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil && s.cur.acquire() {
		p.hits.Add(1)
		return &Lease{h: s.cur}, nil
	}
	p.misses.Add(1)
	h, err := p.openIndex(ctx, name, 0)
	if err != nil {
		return nil, err
	}
	if p.closed.Load() {
		h.retire()
		return nil, ErrClosed
	}
	s.cur = h
	h.acquire()
	p.log.Info("opened index", "index", name, "snapshot", h.ix.Snapshot().SnapshotID)
	return &Lease{h: h}, nil
}

func (p *Pool) acquirePinned(ctx context.Context, cur *query.Index, snapshot int64) (*Lease, error) {
	m, _ := cur.Metadata()
	snap, ok := m.Snapshot(snapshot)
	if !ok {
		return nil, fmt.Errorf("index %q: %w: snapshot %d is not retained", cur.Name(), query.ErrNoSnapshot, snapshot)
	}
	bound := cur.Snapshot().SourceTable.Properties["location"]
	if got := snap.SourceTable.Properties["location"]; got != bound {
		return nil, fmt.Errorf("index %q snapshot %d: %w (it reads %s, the catalog binds %s)", cur.Name(), snapshot, ErrSourceNotBound, got, bound)
	}
	key := pinKey{cur.Name(), m.IndexUUID, snapshot}
	p.mu.Lock()
	if e, ok := p.mu.pinned[key]; ok {
		p.mu.lru.MoveToFront(e)
		h := e.Value.(*pinEntry).h
		if h.acquire() {
			p.mu.Unlock()
			p.hits.Add(1)
			return &Lease{h: h}, nil
		}
	}
	p.mu.Unlock()
	p.misses.Add(1)
	h, err := p.openIndex(ctx, cur.Name(), snapshot)
	if err != nil {
		return nil, err
	}
	if h.ix.IndexUUID().String() != m.IndexUUID {
		h.retire()
		return nil, fmt.Errorf("index %q was replaced while opening snapshot %d; retry", cur.Name(), snapshot)
	}
	h.acquire()
	var evicted []*handle
	p.mu.Lock()
	if p.closed.Load() {
		p.mu.Unlock()
		h.release()
		h.retire()
		return nil, ErrClosed
	}
	if e, ok := p.mu.pinned[key]; ok { // another request opened it meanwhile
		evicted = append(evicted, e.Value.(*pinEntry).h)
		p.mu.lru.Remove(e)
	}
	p.mu.pinned[key] = p.mu.lru.PushFront(&pinEntry{key: key, h: h})
	for p.mu.lru.Len() > p.opts.MaxPinned {
		back := p.mu.lru.Back()
		pe := back.Value.(*pinEntry)
		p.mu.lru.Remove(back)
		delete(p.mu.pinned, pe.key)
		evicted = append(evicted, pe.h)
	}
	p.mu.Unlock()
	for _, e := range evicted {
		e.retire()
	}
	return &Lease{h: h}, nil
}

// Refresh checks every opened index against the catalog now: a changed
// metadata location opens the new current snapshot and swaps it in; a
// dropped index is forgotten. It returns the errors of failed opens
// (joined); the affected indexes keep serving their old snapshot.
func (p *Pool) Refresh(ctx context.Context) error {
	p.mu.Lock()
	slots := make([]*slot, 0, len(p.mu.slots))
	for _, s := range p.mu.slots {
		slots = append(slots, s)
	}
	p.mu.Unlock()
	var errs []error
	for _, s := range slots {
		if err := p.refreshSlot(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (p *Pool) refreshSlot(ctx context.Context, s *slot) error {
	s.mu.Lock()
	old := s.cur
	s.mu.Unlock()
	if old == nil {
		return nil
	}
	entry, err := p.env.Catalog.Load(ctx, s.name)
	if errors.Is(err, catalog.ErrNotFound) {
		s.mu.Lock()
		if s.cur == old {
			s.cur = nil
		}
		s.mu.Unlock()
		old.retire()
		p.log.Info("index dropped", "index", s.name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("refresh %s: %w", s.name, err)
	}
	if _, loc := old.ix.Metadata(); loc == entry.MetadataLocation {
		p.recheckSource(ctx, old)
		return nil
	}
	// Open the new snapshot without holding the slot: the old one serves
	// meanwhile.
	h, err := p.openIndex(ctx, s.name, 0)
	if err != nil {
		p.refreshKO.Add(1)
		p.log.Warn("refresh failed; serving the previous snapshot", "index", s.name,
			"snapshot", old.ix.Snapshot().SnapshotID, "err", err)
		return fmt.Errorf("refresh %s: %w", s.name, err)
	}
	s.mu.Lock()
	if s.cur != old || p.closed.Load() { // someone else swapped first, or closing
		s.mu.Unlock()
		h.retire()
		return nil
	}
	s.cur = h
	s.mu.Unlock()
	old.retire()
	p.refreshOK.Add(1)
	p.log.Info("serving new snapshot", "index", s.name, "snapshot", h.ix.Snapshot().SnapshotID,
		"previous", old.ix.Snapshot().SnapshotID)
	return nil
}

// recheckSource lists the served snapshot's source again (one listing per
// refresh) so that answers carry the ParqDB-Stale header once files are
// added, and logs each change of staleness once. A recorded file that
// moved is logged too; searches that read it answer stale_index.
func (p *Pool) recheckSource(ctx context.Context, h *handle) {
	was := h.ix.Stale()
	now, err := h.ix.RecheckSource(ctx)
	switch {
	case err != nil:
		if h.staleErr.CompareAndSwap(nil, &err) {
			p.log.Warn("source changed; searches that read the changed files answer stale_index", "index", h.ix.Name(), "err", err)
		}
	case now != nil && (was == nil || len(now.Added) != len(was.Added) || now.SourceSnapshot != was.SourceSnapshot):
		p.log.Warn("index is stale", "index", h.ix.Name(), "reason", now.String())
	}
}

// Run polls the catalog every RefreshInterval until ctx ends.
func (p *Pool) Run(ctx context.Context) {
	if p.opts.RefreshInterval < 0 {
		return
	}
	t := time.NewTicker(p.opts.RefreshInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = p.Refresh(ctx) // logged per index
		}
	}
}

// Preload opens the current snapshot of every index in the catalog, so
// that first requests do not pay for it. Indexes that fail to open are
// logged and skipped.
func (p *Pool) Preload(ctx context.Context) error {
	names, err := p.env.Catalog.List(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		l, err := p.Acquire(ctx, n, 0)
		if err != nil {
			p.log.Warn("preload", "index", n, "err", err)
			continue
		}
		l.Release()
	}
	return nil
}

// Close retires every snapshot; snapshots still leased close on their last
// Release. Acquire fails with ErrClosed afterwards.
func (p *Pool) Close() error {
	p.closed.Store(true)
	p.mu.Lock()
	var hs []*handle
	slots := make([]*slot, 0, len(p.mu.slots))
	for _, s := range p.mu.slots {
		slots = append(slots, s)
	}
	for _, e := range p.mu.pinned {
		hs = append(hs, e.Value.(*pinEntry).h)
	}
	p.mu.pinned = map[pinKey]*list.Element{}
	p.mu.lru.Init()
	p.mu.Unlock()
	// Slot locks are taken without p.mu: Acquire holds a slot lock while
	// it takes p.mu.
	for _, s := range slots {
		s.mu.Lock()
		if s.cur != nil {
			hs = append(hs, s.cur)
			s.cur = nil
		}
		s.mu.Unlock()
	}
	for _, h := range hs {
		h.retire()
	}
	return nil
}
