package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/parqdb/parqdb/internal/errclass"
	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/storage"
)

// MetadataFolder is the warehouse folder of index metadata files.
const MetadataFolder = "metadata"

// MetadataLocation returns a fresh location for m's metadata file,
//
//	metadata/<index-uuid>/<last-sequence-number, zero-padded to 20>-<random uuid>.metadata.json
//
// The random part makes every location new, so that two writers building
// on the same base never write the same file; the zero-padded sequence
// number makes a folder listing sort in commit order.
func MetadataLocation(m *metadata.Metadata) (string, error) {
	return location.Join(MetadataFolder, m.IndexUUID,
		fmt.Sprintf("%020d-%s.metadata.json", m.LastSequenceNumber, uuid.NewString()))
}

// WriteMetadata writes m's canonical bytes (metadata.Marshal, which
// validates m first) to a new location from MetadataLocation with
// PutIfAbsent, and returns the location. The file is immutable from then
// on; it becomes current only when a catalog commit names it.
func WriteMetadata(ctx context.Context, wh storage.Bucket, m *metadata.Metadata) (string, error) {
	data, err := metadata.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("write metadata: %w", err)
	}
	loc, err := MetadataLocation(m)
	if err != nil {
		return "", fmt.Errorf("write metadata: %w", err)
	}
	if err := wh.PutIfAbsent(ctx, loc, data); err != nil {
		// A retried request may find what its first attempt stored.
		if !errors.Is(err, storage.ErrExist) || !sameContent(ctx, wh, loc, data) {
			return "", fmt.Errorf("write metadata %s in %s: %w", loc, wh, err)
		}
	}
	return loc, nil
}

func sameContent(ctx context.Context, wh storage.Bucket, loc string, data []byte) bool {
	got, err := storage.ReadAll(ctx, wh, loc)
	return err == nil && bytes.Equal(got, data)
}

// ReadMetadata reads and parses the metadata file at loc. A loaded
// Metadata stays valid for its holder: files are never changed, so a
// reader keeps using it while writers commit successors. A location that
// escapes the warehouse is stored data that is damaged: its
// location.ErrInvalid is marked corrupt (errclass.ErrCorrupt), as
// metadata.ErrInvalid, for a file that does not parse or validate, is.
func ReadMetadata(ctx context.Context, wh storage.Bucket, loc string) (*metadata.Metadata, error) {
	if err := location.Check(loc); err != nil {
		return nil, errclass.MarkCorrupt(err)
	}
	data, err := storage.ReadAll(ctx, wh, loc)
	if err != nil {
		return nil, fmt.Errorf("read metadata %s in %s: %w", loc, wh, err)
	}
	m, err := metadata.ParseFile(loc, data)
	if err != nil {
		return nil, err // metadata.ErrInvalid: of the corrupt class
	}
	return m, nil
}

// LoadMetadata loads the entry of name and parses its current metadata
// file. It checks that the catalog binding matches the current snapshot's
// source-table (ErrBindingMismatch otherwise, marked corrupt: the catalog
// and the metadata it points to disagree).
func LoadMetadata(ctx context.Context, cat Catalog, wh storage.Bucket, name string) (*metadata.Metadata, Entry, error) {
	e, err := cat.Load(ctx, name)
	if err != nil {
		return nil, Entry{}, err
	}
	m, err := ReadMetadata(ctx, wh, e.MetadataLocation)
	if err != nil {
		return nil, Entry{}, fmt.Errorf("index %s: %w", name, err)
	}
	if err := checkBinding(name, m, e.Source); err != nil {
		return nil, Entry{}, errclass.MarkCorrupt(fmt.Errorf("%w; metadata %s in catalog %s", err, e.MetadataLocation, cat))
	}
	return m, e, nil
}

func checkBinding(name string, m *metadata.Metadata, src metadata.TableDefinition) error {
	cur := m.CurrentSnapshot()
	if cur == nil {
		return fmt.Errorf("index %s: %w: no current snapshot", name, metadata.ErrInvalid)
	}
	if !SameTable(cur.SourceTable, src) {
		return fmt.Errorf("index %s: %w (snapshot %d): the catalog binds %s %q, the metadata reads %s %q", name, ErrBindingMismatch, cur.SnapshotID,
			src.Provider, src.Properties["location"], cur.SourceTable.Provider, cur.SourceTable.Properties["location"])
	}
	return nil
}

// CreateIndex writes m as the first metadata file of a new index and
// registers name with it and the source binding, which must match m's
// current snapshot (ErrBindingMismatch). It fails with ErrExists, before
// writing anything, when the name is taken; if another writer creates the
// name in between, the file written is left as an orphan for garbage
// collection.
func CreateIndex(ctx context.Context, cat Catalog, wh storage.Bucket, name string, m *metadata.Metadata,
	source metadata.TableDefinition) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	if err := m.Validate(); err != nil {
		return "", fmt.Errorf("index %s: %w", name, err)
	}
	if err := checkBinding(name, m, source); err != nil {
		return "", err
	}
	if _, err := cat.Load(ctx, name); err == nil {
		return "", fmt.Errorf("%s: create %s: %w", cat, name, ErrExists)
	} else if !errors.Is(err, ErrNotFound) {
		return "", err
	}
	loc, err := WriteMetadata(ctx, wh, m)
	if err != nil {
		return "", fmt.Errorf("index %s: %w", name, err)
	}
	if err := cat.Create(ctx, Entry{Name: name, MetadataLocation: loc, Source: source}); err != nil {
		return "", err
	}
	return loc, nil
}

// UpdateFunc builds the successor of base, the current metadata of entry.
// It returns the new metadata and, to change the catalog's source binding,
// a new binding (nil keeps entry.Source). It may be called several times,
// once per attempt, each time with a newer base; it must not keep base or
// change it.
type UpdateFunc func(base *metadata.Metadata, entry Entry) (*metadata.Metadata, *Entry, error)

// DefaultMaxAttempts is how many times Update tries before it gives up on
// conflicts.
const DefaultMaxAttempts = 10

type updateConfig struct {
	attempts   int
	minBackoff time.Duration
	maxBackoff time.Duration
	afterWrite func(ctx context.Context, location string) error
}

// UpdateOption configures Update.
type UpdateOption func(*updateConfig)

// MaxAttempts sets how many attempts Update makes (default
// DefaultMaxAttempts; values below 1 mean 1).
func MaxAttempts(n int) UpdateOption {
	return func(c *updateConfig) { c.attempts = max(n, 1) }
}

// Backoff sets the wait before retry k (k = 1, 2, …): a uniformly random
// duration in [0, min(max, unit·2^(k-1))], where unit is min or, if
// longer, how long the lost attempt took. The default is 5 ms and 1 s.
// The randomness keeps racing writers from meeting again in lock step.
func Backoff(minWait, maxWait time.Duration) UpdateOption {
	return func(c *updateConfig) { c.minBackoff, c.maxBackoff = minWait, max(minWait, maxWait) }
}

// AfterWrite sets a function Update calls after each metadata file is
// written and before the commit that would make it current; an error from
// it ends Update and leaves the file as an orphan. It is meant for
// logging, and for tests that stop a writer between the two steps.
func AfterWrite(fn func(ctx context.Context, location string) error) UpdateOption {
	return func(c *updateConfig) { c.afterWrite = fn }
}

// Update publishes a successor of the current metadata of index name: it
// loads the entry, reads and parses the current metadata file, calls fn to
// build the successor on that base, checks that the binding matches the
// successor's current snapshot, writes it with WriteMetadata and commits
// it with cat.Commit from the location it was built on. When another
// writer committed first (ErrConflict) it deletes the file it wrote (no
// one can reference it), waits a random backoff and starts again with the
// new base, up to MaxAttempts times; the final conflict is returned
// wrapped. Errors from fn end Update unchanged (wrapped). It returns the
// committed metadata and its location. The returned metadata, like base,
// is shared and must not be modified (metadata.Successor copies).
//
// Updates of one index through one Catalog value take turns within a
// process: they could only waste work racing each other. Other Catalog
// values and other processes are coordinated by the catalog's
// compare-and-swap alone. fn must therefore not call Update for the same
// index and catalog.
//
// If the process dies after writing and before committing, the catalog
// still names the old file, which stays valid; the new file is an orphan.
func Update(ctx context.Context, cat Catalog, wh storage.Bucket, name string, fn UpdateFunc,
	opts ...UpdateOption) (*metadata.Metadata, string, error) {
	cfg := updateConfig{attempts: DefaultMaxAttempts, minBackoff: 5 * time.Millisecond, maxBackoff: time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	var lastErr error
	var lastTook time.Duration
	for attempt := 1; attempt <= cfg.attempts; attempt++ {
		if attempt > 1 {
			if err := sleep(ctx, backoff(cfg, attempt-1, lastTook)); err != nil {
				return nil, "", err
			}
		}
		start := time.Now()
		unlock := lockIndex(cat, name)
		next, loc, err := updateOnce(ctx, cat, wh, name, fn, cfg)
		unlock()
		lastTook = time.Since(start)
		if err == nil {
			return next, loc, nil
		}
		if !errors.Is(err, ErrConflict) {
			return nil, "", err
		}
		lastErr = err
	}
	return nil, "", fmt.Errorf("update %s: gave up after %d attempts: %w", name, cfg.attempts, lastErr)
}

func updateOnce(ctx context.Context, cat Catalog, wh storage.Bucket, name string, fn UpdateFunc,
	cfg updateConfig) (*metadata.Metadata, string, error) {
	entry, err := cat.Load(ctx, name)
	if err != nil {
		return nil, "", err
	}
	base, ok := parsed.get(wh, entry.MetadataLocation)
	if !ok {
		if base, err = ReadMetadata(ctx, wh, entry.MetadataLocation); err != nil {
			return nil, "", fmt.Errorf("index %s: %w", name, err)
		}
		parsed.put(wh, entry.MetadataLocation, base)
	}
	if err := checkBinding(name, base, entry.Source); err != nil {
		return nil, "", err
	}
	next, binding, err := fn(base, entry)
	if err != nil {
		return nil, "", fmt.Errorf("update %s: %w", name, err)
	}
	if next == nil {
		return nil, "", fmt.Errorf("update %s: update function returned no metadata", name)
	}
	nextEntry := entry
	if binding != nil {
		nextEntry.Source = binding.Source
	}
	if err := checkBinding(name, next, nextEntry.Source); err != nil {
		return nil, "", err
	}
	loc, err := WriteMetadata(ctx, wh, next) // validates next
	if err != nil {
		return nil, "", fmt.Errorf("update %s: %w", name, err)
	}
	if cfg.afterWrite != nil {
		if err := cfg.afterWrite(ctx, loc); err != nil {
			return nil, "", fmt.Errorf("update %s: after writing %s: %w", name, loc, err)
		}
	}
	nextEntry.MetadataLocation = loc
	err = cat.Commit(ctx, entry.MetadataLocation, nextEntry)
	if errors.Is(err, ErrConflict) {
		// The commit definitely did not happen, so no catalog names loc:
		// remove it now rather than leave it to garbage collection.
		_ = wh.Delete(context.WithoutCancel(ctx), loc)
	}
	if err != nil {
		return nil, "", err
	}
	parsed.put(wh, loc, next)
	return next, loc, nil
}

// parsed remembers the last few metadata files Update parsed or committed,
// by warehouse and location. Files are immutable, so an entry never goes
// stale; it saves re-parsing the base when this process made the last
// commit, which is the common case for a busy writer.
var parsed = &metadataCache{}

type metadataCache struct {
	mu      sync.Mutex
	entries []cacheEntry // most recent last
}

type cacheEntry struct {
	wh  storage.Bucket
	loc string
	m   *metadata.Metadata
}

const metadataCacheSize = 8

// cacheable reports whether wh can be a map key: a bucket of a
// non-comparable type would make == panic.
func cacheable(wh storage.Bucket) bool {
	return wh != nil && reflect.TypeOf(wh).Comparable()
}

func (c *metadataCache) get(wh storage.Bucket, loc string) (*metadata.Metadata, bool) {
	if !cacheable(wh) {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.wh == wh && e.loc == loc {
			return e.m, true
		}
	}
	return nil, false
}

func (c *metadataCache) put(wh storage.Bucket, loc string, m *metadata.Metadata) {
	if !cacheable(wh) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) == metadataCacheSize {
		c.entries = slices.Delete(c.entries, 0, 1)
	}
	c.entries = append(c.entries, cacheEntry{wh: wh, loc: loc, m: m})
}

// backoff is the wait before retry number retry: uniformly random in
// [0, min(max, unit·2^(retry-1))], where the unit is the configured
// minimum or, if longer, the duration of the attempt that just lost.
// Scaling by the attempt's own duration spreads racing writers over about
// as many attempt-lengths as there are writers, whatever an attempt costs
// (metadata files grow with every snapshot).
func backoff(cfg updateConfig, retry int, took time.Duration) time.Duration {
	unit := max(cfg.minBackoff, took)
	d := cfg.maxBackoff
	if retry < 30 && unit < d>>(retry-1) {
		d = unit << (retry - 1)
	}
	if d <= 0 {
		return 0
	}
	return rand.N(d + 1)
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// indexLocks serialises Updates per (Catalog value, index name) in this
// process. Entries are removed when no Update holds or waits for them.
var indexLocks struct {
	sync.Mutex
	m map[lockKey]*lockEntry
}

type lockKey struct {
	cat  Catalog
	name string
}

type lockEntry struct {
	mu   sync.Mutex
	refs int
}

// lockIndex locks (cat, name) and returns the unlock function. A Catalog
// of a non-comparable type is not locked.
func lockIndex(cat Catalog, name string) func() {
	if cat == nil || !reflect.TypeOf(cat).Comparable() {
		return func() {}
	}
	k := lockKey{cat, name}
	indexLocks.Lock()
	if indexLocks.m == nil {
		indexLocks.m = map[lockKey]*lockEntry{}
	}
	e := indexLocks.m[k]
	if e == nil {
		e = &lockEntry{}
		indexLocks.m[k] = e
	}
	e.refs++
	indexLocks.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		indexLocks.Lock()
		if e.refs--; e.refs == 0 {
			delete(indexLocks.m, k)
		}
		indexLocks.Unlock()
	}
}
