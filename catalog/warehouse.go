package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/storage"
)

// Warehouse is a catalog kept as objects in the warehouse itself, for users
// without a database. Each index has a numbered series of immutable pointer
// objects
//
//	catalog/<name>/v<version, zero-padded to 20 digits>.json
//
// and the highest existing version is current. Every change (create,
// commit, drop) stores version N+1 with PutIfAbsent after reading version
// N, so of two writers that read the same N at most one can win; the
// loser's put fails and nothing changes. Drop stores a tombstone version;
// versions are never deleted, because a deleted number could be taken
// again by a writer that read an older version. See docs/catalog.md.
//
// Listing is only a hint: after listing, Load probes N+1, N+2, … until one
// is missing, so a listing that lags behind writes cannot make a stale
// version look current, and correctness never depends on it. A Warehouse
// also remembers the last version it saw of each index and starts there,
// so that a busy writer reads two small objects per Load and lists
// nothing; it lists again when the remembered version is more than a few
// versions behind.
type Warehouse struct {
	b  storage.Bucket
	mu struct {
		sync.Mutex
		seen map[string]int64 // index name → highest version seen
	}
}

// NewWarehouse returns the warehouse catalog stored in b. b must offer an
// atomic PutIfAbsent across all writers (storage.Bucket's contract).
func NewWarehouse(b storage.Bucket) *Warehouse { return &Warehouse{b: b} }

// WarehousePrefix is the folder of the warehouse catalog's objects.
const WarehousePrefix = "catalog/"

// pointerFormatVersion is the version of the pointer object format.
const pointerFormatVersion = 1

// pointer is one version object of the warehouse catalog.
type pointer struct {
	FormatVersion    int                       `json:"format-version"`
	Name             string                    `json:"name"`
	Version          int64                     `json:"version"`
	Dropped          bool                      `json:"dropped,omitempty"`
	MetadataLocation string                    `json:"metadata-location,omitempty"`
	SourceTable      *metadata.TableDefinition `json:"source-table,omitempty"`
	UpdatedAtMs      int64                     `json:"updated-at-ms"`
	// WriteID is random per put: a writer whose put reports "exists" reads
	// the version back and recognises its own write by it, in case a
	// retried request found the object its first, seemingly failed,
	// attempt had stored.
	WriteID string `json:"write-id"`
}

// maxProbe is how many versions past a remembered one Load reads before it
// lists instead.
const maxProbe = 4

// maxWarehouseRetries bounds the re-reads of Create and Drop, which are not
// conditional on a location and so retry a lost put themselves.
const maxWarehouseRetries = 100

func versionKey(name string, v int64) string {
	return fmt.Sprintf("%s%s/v%020d.json", WarehousePrefix, name, v)
}

// parseVersionKey splits "catalog/<name>/v<20 digits>.json"; ok is false
// for any other key, which the catalog ignores.
func parseVersionKey(key string) (name string, v int64, ok bool) {
	rest, ok := strings.CutPrefix(key, WarehousePrefix)
	if !ok {
		return "", 0, false
	}
	name, file, ok := strings.Cut(rest, "/")
	if !ok || CheckName(name) != nil || len(file) != len("v.json")+20 ||
		!strings.HasPrefix(file, "v") || !strings.HasSuffix(file, ".json") {
		return "", 0, false
	}
	v, err := strconv.ParseInt(file[1:21], 10, 64)
	if err != nil || v < 1 {
		return "", 0, false
	}
	return name, v, true
}

// String describes the catalog.
func (w *Warehouse) String() string { return "warehouse catalog in " + w.b.String() }

// Close does nothing; the bucket belongs to the caller.
func (w *Warehouse) Close() error { return nil }

// head returns the current version of name and its pointer (nil when the
// name never existed). It starts from the version this Warehouse saw last
// or else from the highest listed version, and probes forward, so a
// lagging listing only costs extra reads.
func (w *Warehouse) head(ctx context.Context, name string) (int64, *pointer, error) {
	if h := w.seen(name); h > 0 {
		v, cur, done, err := w.resolve(ctx, name, h, maxProbe)
		if err == nil && done {
			w.saw(name, v)
			return v, cur, nil
		}
		if err != nil && !errors.Is(err, storage.ErrNotExist) {
			return 0, nil, err
		}
		// Far behind, or the remembered version is gone (the folder was
		// deleted by hand): list.
	}
	infos, err := w.b.List(ctx, WarehousePrefix+name+"/")
	if err != nil {
		return 0, nil, fmt.Errorf("%s: list %s: %w", w, name, err)
	}
	var listed int64
	for _, info := range infos {
		if n, v, ok := parseVersionKey(info.Key); ok && n == name && v > listed {
			listed = v
		}
	}
	v, cur, _, err := w.resolve(ctx, name, listed, -1)
	if errors.Is(err, storage.ErrNotExist) {
		return 0, nil, fmt.Errorf("%s: %s: listed version %d vanished (versions are never deleted): %w",
			w, name, listed, ErrCorrupt)
	}
	if err != nil {
		return 0, nil, err
	}
	w.saw(name, v)
	return v, cur, nil
}

func (w *Warehouse) seen(name string) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.seen[name]
}

func (w *Warehouse) saw(name string, v int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.seen == nil {
		w.mu.seen = map[string]int64{}
	}
	if v > 0 {
		w.mu.seen[name] = v
	} else {
		delete(w.mu.seen, name)
	}
}

// resolve reads version from (if not zero), then later versions until one
// is missing (done) or, when limit >= 0, limit more versions were found.
// A missing version from gives an error wrapping storage.ErrNotExist.
func (w *Warehouse) resolve(ctx context.Context, name string, from int64, limit int) (v int64, cur *pointer, done bool, err error) {
	v = from
	if v > 0 {
		if cur, err = w.read(ctx, name, v); err != nil {
			return 0, nil, false, err
		}
	}
	for n := 0; limit < 0 || n < limit; n++ {
		if err := ctx.Err(); err != nil {
			return 0, nil, false, err
		}
		p, err := w.read(ctx, name, v+1)
		if errors.Is(err, storage.ErrNotExist) {
			return v, cur, true, nil
		}
		if err != nil {
			return 0, nil, false, err
		}
		v, cur = v+1, p
	}
	return v, cur, false, nil
}

// read reads and checks one version object.
func (w *Warehouse) read(ctx context.Context, name string, v int64) (*pointer, error) {
	key := versionKey(name, v)
	data, err := storage.ReadAll(ctx, w.b, key)
	if err != nil {
		return nil, fmt.Errorf("%s: read %s: %w", w, key, err)
	}
	p, err := parsePointer(name, v, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", w, key, err)
	}
	return p, nil
}

// parsePointer decodes version v of index name strictly: no unknown
// members, no trailing data, and a name and version that match the key.
func parsePointer(name string, v int64, data []byte) (*pointer, error) {
	var p pointer
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the object", ErrCorrupt)
	}
	switch {
	case p.FormatVersion != pointerFormatVersion:
		return nil, fmt.Errorf("%w: format-version %d, want %d", ErrCorrupt, p.FormatVersion, pointerFormatVersion)
	case p.Name != name || p.Version != v:
		return nil, fmt.Errorf("%w: holds name %q version %d", ErrCorrupt, p.Name, p.Version)
	case p.Dropped && (p.SourceTable != nil || p.MetadataLocation != ""):
		return nil, fmt.Errorf("%w: tombstone with metadata-location or source-table", ErrCorrupt)
	case !p.Dropped && (p.SourceTable == nil || location.Check(p.MetadataLocation) != nil):
		return nil, fmt.Errorf("%w: live version without a valid metadata-location or source-table", ErrCorrupt)
	}
	return &p, nil
}

// put stores version p.Version; an error wrapping storage.ErrExist means
// another writer took that version first.
func (w *Warehouse) put(ctx context.Context, p *pointer) error {
	p.FormatVersion = pointerFormatVersion
	p.UpdatedAtMs = time.Now().UnixMilli()
	p.WriteID = uuid.NewString()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return fmt.Errorf("%s: encode %s: %w", w, p.Name, err)
	}
	key := versionKey(p.Name, p.Version)
	err := w.b.PutIfAbsent(ctx, key, buf.Bytes())
	if errors.Is(err, storage.ErrExist) {
		if got, rerr := w.read(ctx, p.Name, p.Version); rerr == nil && got.WriteID == p.WriteID {
			err = nil // our own earlier attempt stored it
		}
	}
	if err != nil {
		return fmt.Errorf("%s: put %s: %w", w, key, err)
	}
	w.saw(p.Name, p.Version)
	return nil
}

func live(e Entry, v int64) *pointer {
	src := e.Source
	return &pointer{Name: e.Name, Version: v, MetadataLocation: e.MetadataLocation, SourceTable: &src}
}

// Create implements Catalog.
func (w *Warehouse) Create(ctx context.Context, e Entry) error {
	if err := checkEntry(e); err != nil {
		return err
	}
	for range maxWarehouseRetries {
		v, cur, err := w.head(ctx, e.Name)
		if err != nil {
			return err
		}
		if cur != nil && !cur.Dropped {
			return fmt.Errorf("%s: create %s: %w", w, e.Name, ErrExists)
		}
		err = w.put(ctx, live(e, v+1))
		if !errors.Is(err, storage.ErrExist) {
			return err
		}
		// Another writer took v+1: look again.
	}
	return fmt.Errorf("%s: create %s: gave up after %d lost races", w, e.Name, maxWarehouseRetries)
}

// Load implements Catalog.
func (w *Warehouse) Load(ctx context.Context, name string) (Entry, error) {
	if err := CheckName(name); err != nil {
		return Entry{}, err
	}
	_, cur, err := w.head(ctx, name)
	if err != nil {
		return Entry{}, err
	}
	if cur == nil || cur.Dropped {
		return Entry{}, &NotFoundError{Catalog: w.String(), Name: name}
	}
	return Entry{Name: name, MetadataLocation: cur.MetadataLocation, Source: *cur.SourceTable}, nil
}

// Commit implements Catalog: read version N, check its location, put N+1.
func (w *Warehouse) Commit(ctx context.Context, expected string, next Entry) error {
	if err := checkEntry(next); err != nil {
		return err
	}
	op := "commit " + next.Name
	v, cur, err := w.head(ctx, next.Name)
	if err != nil {
		return err
	}
	if cur == nil || cur.Dropped {
		return fmt.Errorf("%s: %s: %w", w, op, ErrNotFound)
	}
	if cur.MetadataLocation != expected {
		return fmt.Errorf("%s: %s: expected metadata location %s is not current: %w", w, op, expected, ErrConflict)
	}
	err = w.put(ctx, live(next, v+1))
	if errors.Is(err, storage.ErrExist) {
		return fmt.Errorf("%s: %s: version %d taken by another writer: %w", w, op, v+1, ErrConflict)
	}
	return err
}

// Drop implements Catalog by storing a tombstone version.
func (w *Warehouse) Drop(ctx context.Context, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	for range maxWarehouseRetries {
		v, cur, err := w.head(ctx, name)
		if err != nil {
			return err
		}
		if cur == nil || cur.Dropped {
			return &NotFoundError{Catalog: w.String(), Name: name}
		}
		err = w.put(ctx, &pointer{Name: name, Version: v + 1, Dropped: true})
		if !errors.Is(err, storage.ErrExist) {
			return err
		}
	}
	return fmt.Errorf("%s: drop %s: gave up after %d lost races", w, name, maxWarehouseRetries)
}

// List implements Catalog with one listing of the catalog folder, then one
// read per index (its highest listed version, plus a probe past it).
func (w *Warehouse) List(ctx context.Context) ([]string, error) {
	infos, err := w.b.List(ctx, WarehousePrefix)
	if err != nil {
		return nil, fmt.Errorf("%s: list: %w", w, err)
	}
	highest := map[string]int64{}
	for _, info := range infos {
		if n, v, ok := parseVersionKey(info.Key); ok && v > highest[n] {
			highest[n] = v
		}
	}
	names := make([]string, 0, len(highest))
	for n := range highest {
		names = append(names, n)
	}
	slices.Sort(names)
	alive := make([]bool, len(names))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, n := range names {
		g.Go(func() error {
			v, cur, _, err := w.resolve(gctx, n, highest[n], -1)
			if err != nil {
				return err
			}
			w.saw(n, v)
			alive[i] = cur != nil && !cur.Dropped
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := []string{}
	for i, n := range names {
		if alive[i] {
			out = append(out, n)
		}
	}
	return out, nil
}
