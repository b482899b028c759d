package query

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/artifact"
	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/internal/errclass"
	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/internal/vecmath"
	"github.com/parqdb/parqdb/ivf"
	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/vecfile"
)

// Env is where an index lives: the warehouse and the catalog.
type Env struct {
	Warehouse storage.Bucket
	Catalog   catalog.Catalog
}

// OpenOptions tune Open.
type OpenOptions struct {
	// SnapshotID selects a retained snapshot; 0 selects the current one.
	SnapshotID int64
	// CacheBytes bounds the cache of decoded postings; 0 bounds it only
	// by the process budget (Budget), a negative value disables caching.
	CacheBytes int64
	// VectorCacheBytes bounds the vector store: the exact source vectors,
	// per list, that refine and the source encoding use; 0 bounds it only
	// by the process budget (Budget), a negative value disables it.
	VectorCacheBytes int64
	// RowCacheRows bounds the cache of joined source rows; 0 selects
	// DefaultRowCacheRows, a negative value disables it.
	RowCacheRows int
	// Budget is the memory budget that the postings cache, the vector
	// store, the joined-rows cache and the filter bitmaps charge: nil
	// selects DefaultBudget, shared by every index opened so; NewBudget
	// makes one of its own (for one index, or shared by some). (Decoded
	// source pages are always charged to DefaultBudget.)
	Budget *Budget
}

// Budget bounds the bytes that the caches charged to it hold together:
// when a cache would pass the limit, the caches evict. Limit, Used and
// SetLimit read and change it; it is safe for concurrent use.
type Budget = membudget.Budget

// NewBudget returns a budget of limit bytes (< 0 means 0: nothing is
// cached), for OpenOptions.Budget.
func NewBudget(limit int64) *Budget { return membudget.New(limit) }

// DefaultBudget is the process-wide budget that indexes charge unless
// OpenOptions.Budget says otherwise (the CLI's --cache-size sets its
// limit); its limit is a quarter of the memory available to the process
// (the machine's, or the cgroup's limit when lower; 1 GiB where neither
// can be read) until SetLimit changes it.
var DefaultBudget = membudget.Default

// Index is an opened snapshot of an index, ready to search. It is safe for
// concurrent use by many goroutines. Close releases its files.
type Index struct {
	name     string
	metaLoc  string
	bound    metadata.TableDefinition // the catalog's source binding
	uuid     uuid.UUID                // meta.IndexUUID, parsed at open
	meta     *metadata.Metadata
	snap     *metadata.Snapshot
	params   metadata.IVFParams
	art      *artifact.Artifact
	manifest *postings.Manifest
	schema   postings.Schema
	// manifestHash is the SHA-256 of manifest.json, which a vectors file
	// must name (vecfile.go).
	manifestHash [32]byte
	vfile        vecFileState

	wh       storage.Bucket
	whStats  *storage.Stats
	srcStats *storage.Stats
	files    []storage.Object // postings files, by manifest file index

	table  *source.Table
	layout *source.Layout
	// recorded is the snapshot's recorded file list the source was opened
	// from (openSourceTable; nil when it has none); stale is what the last
	// check found added.
	recorded []source.Recorded
	stale    atomic.Pointer[Staleness]

	cache *cache

	keyColsOnce sync.Once
	keyCols     []string // keyResultColumns
	// blocked: LVQ8 lists, and the source encoding's shadows of its
	// exact vectors (srcCodes), keep their codes in the blocked layout
	// (list, blockedCodes).
	blocked bool
	// prefetch: the codes outgrow the caches (listMajorMinBytes), so a
	// scan asks for the next list's start ahead (scoreLVQ8).
	prefetch bool
	router   *router
	rows     *rowCache
	jcols    *joinCols // scalar joined columns per row group (joincols.go)

	keyOnce  sync.Once
	keyIndex *source.KeyIndex
	keyErr   error

	fileStart []int64 // source row ordinal of each file's first row

	asgOnce sync.Once // exact assignment, for SearchNearKey
	asg     *ivf.Assigner

	skOnce sync.Once // source keys by ordinal (KeyAt, ExactBatch)
	skKeys []byte
	skEnds []int
	skErr  error

	vecBudget int64
	vecOnce   sync.Once
	vecAll    []float32 // canonical source vectors by ordinal, if they fit
	vecErr    error
	vstore    *vecStore         // exact vectors per list (vecstore.go)
	budget    *membudget.Budget // charged by cache, vstore, rows and filters

	filters filterCache // bitmaps of filter predicates (filter.go)
	recall  recallState // calibration for Options.Recall (recall.go)
}

// Open opens index name from the catalog: it reads and validates the
// metadata, the centroid artifact, the postings manifest and the source
// binding (spec "Source Binding"), all once, and caches them. A snapshot
// whose index-provider, index-table definitions or source-table name a
// provider or property this implementation does not know is refused
// (artifact.CheckProviders; the error wraps postings.ErrProperties) before
// any table is read.
func Open(ctx context.Context, env Env, name string, opts OpenOptions) (*Index, error) {
	m, entry, err := catalog.LoadMetadata(ctx, env.Catalog, env.Warehouse, name)
	if err != nil {
		return nil, storedDataErr(err)
	}
	ix := &Index{name: name, metaLoc: entry.MetadataLocation, meta: m, bound: entry.Source}
	ix.wh, ix.whStats = storage.WithStats(env.Warehouse)
	if err := ix.open(ctx, opts); err != nil {
		ix.Close()
		return nil, storedDataErr(err)
	}
	return ix, nil
}

// storedDataErr marks as corrupt (errclass.ErrCorrupt) an error of Open
// that says a definition it read is invalid: a location in the metadata
// that escapes the warehouse, postings schema or provider properties that
// break the profile. Open reads them from the warehouse, so they are
// damaged data, not a bad request. (Invalid metadata, metadata.ErrInvalid,
// is of the class already.)
func storedDataErr(err error) error {
	if errors.Is(err, location.ErrInvalid) || errors.Is(err, postings.ErrSchema) || errors.Is(err, postings.ErrProperties) {
		return errclass.MarkCorrupt(err)
	}
	return err
}

func (ix *Index) open(ctx context.Context, opts OpenOptions) error {
	m := ix.meta
	if opts.SnapshotID == 0 {
		ix.snap = m.CurrentSnapshot()
	} else {
		s, ok := m.Snapshot(opts.SnapshotID)
		if !ok {
			return fmt.Errorf("index %q: %w: snapshot %d is not retained (see `parqdb index history %s`)", ix.name, ErrNoSnapshot, opts.SnapshotID, ix.name)
		}
		ix.snap = s
	}
	p, err := ix.snap.IVF()
	if err != nil {
		return fmt.Errorf("%s: %w", ix.metaLoc, err)
	}
	ix.params = p
	// Providers first: nothing a provider ParqDB does not know lays out is
	// read, exactly as an unknown index family is refused by the parser.
	u, err := uuid.Parse(m.IndexUUID)
	if err != nil {
		return fmt.Errorf("%s: index-uuid %q: %w", ix.metaLoc, m.IndexUUID, err)
	}
	ix.uuid = u
	if err := artifact.CheckProviders(ix.snap, u); err != nil {
		return fmt.Errorf("index %q: %s: %w", ix.name, ix.metaLoc, err)
	}
	if ix.art, err = artifact.LoadForSnapshot(ctx, ix.wh, ix.snap); err != nil {
		return fmt.Errorf("index %q snapshot %d: %w", ix.name, ix.snap.SnapshotID, err)
	}
	if err := ix.openPostings(ctx); err != nil {
		return fmt.Errorf("index %q snapshot %d: %w", ix.name, ix.snap.SnapshotID, err)
	}
	if err := ix.openSource(ctx); err != nil {
		return err
	}
	budget := opts.CacheBytes
	if budget == 0 {
		budget = math.MaxInt64
	}
	ix.budget = opts.Budget
	if ix.budget == nil {
		ix.budget = DefaultBudget
	}
	ix.cache = newCache(budget, ix.NList(), ix.budget)
	ix.router = newRouter(ix.art.Centroids, routeOptions)
	rows := opts.RowCacheRows
	if rows == 0 {
		rows = DefaultRowCacheRows
	}
	ix.rows = newRowCache(rows, ix.budget)
	ix.filters.init(ix.budget)
	ix.jcols = newJoinCols(ix.budget)
	ix.vecBudget = opts.VectorCacheBytes
	if ix.vecBudget == 0 {
		ix.vecBudget = DefaultVectorCacheBytes
	}
	vs := opts.VectorCacheBytes
	if vs == 0 {
		vs = math.MaxInt64
	}
	ix.vstore = newVecStore(vs, ix.NList(), ix.Dim(), ix.budget)
	if ix.schema.Encoding == metadata.EncodingSource {
		ix.vstore.setShadow(ix.blocked)
	}
	return nil
}

// openPostings reads and checks the manifest and opens the postings files.
func (ix *Index) openPostings(ctx context.Context) error {
	lay := postings.SnapshotLayout(ix.snap)
	loc := lay.Table
	if err := location.Check(loc); err != nil {
		return err
	}
	mkey := lay.Manifest()
	data, err := storage.ReadAll(ctx, ix.wh, mkey)
	if err != nil {
		return fmt.Errorf("read postings manifest: %w", err)
	}
	man, err := postings.ParseManifest(data)
	if err != nil {
		return fmt.Errorf("%s: %w", mkey, err)
	}
	if err := man.CheckLocation(loc); err != nil {
		return fmt.Errorf("%s: %w", mkey, err)
	}
	if err := man.CheckRoots(ix.art.Centroids.CIDOffsets); err != nil {
		return fmt.Errorf("%s: %w", mkey, err)
	}
	if man.Rows != ix.snap.IndexedRows || int(man.NList) != int(ix.params.NList) ||
		man.Encoding != ix.params.PostingEncoding || man.Dim != int(ix.params.Dimension) {
		return fmt.Errorf("%s: %w: manifest (rows %d, nlist %d, %s, dim %d) disagrees with the snapshot (rows %d, nlist %d, %s, dim %d)",
			mkey, ErrCorrupt, man.Rows, man.NList, man.Encoding, man.Dim,
			ix.snap.IndexedRows, ix.params.NList, ix.params.PostingEncoding, ix.params.Dimension)
	}
	ix.manifest = man
	ix.manifestHash = vecfile.ManifestHash(data)
	ix.schema = man.Schema()
	ix.blocked = ix.schema.Encoding != metadata.EncodingLVQ4 && blockedCodes(man.Dim)
	ix.prefetch = ix.blocked && ix.snap.IndexedRows*int64(man.Dim) >= listMajorMinBytes
	for i := range ix.schema.Keys {
		ix.schema.Keys[i].Name = ix.snap.SourceKeyFields[i]
	}
	// The manifest gives every file's size, so opening a file sends no
	// request (no HEAD on S3): Open costs the same whatever the number of
	// postings files. A file that is missing or of another size is
	// reported by the first read of it, and a replaced row group by its
	// CRC-32C (profile §8.3).
	ix.files = make([]storage.Object, len(man.Files))
	for i, f := range man.Files {
		o, err := storage.OpenSized(ctx, ix.wh, f.Path, f.Size)
		if err != nil {
			return fmt.Errorf("open postings file: %w", err)
		}
		ix.files[i] = o
	}
	return nil
}

// openSource opens the bound source and checks the binding: same exact
// state (table-identity), vector and key fields of supported types, and
// exactly indexed-rows rows.
func (ix *Index) openSource(ctx context.Context) error {
	st := ix.snap.SourceTable
	loc := st.Properties["location"]
	// catalog.LoadMetadata checked that the catalog binds the current
	// snapshot's source-table; an older snapshot is read only where it
	// names the same table, so no metadata file makes Open read a file
	// or bucket the catalog never bound.
	if st.Provider != ix.bound.Provider || loc != ix.bound.Properties["location"] {
		return fmt.Errorf("index %q snapshot %d: %w: its source-table location %q is not the catalog's binding %q",
			ix.name, ix.snap.SnapshotID, catalog.ErrBindingMismatch, loc, ix.bound.Properties["location"])
	}
	var t *source.Table
	p, err := source.Lookup(st.Provider)
	switch {
	case err != nil:
	case p != nil:
		// A linked provider's table at the state the index was built from
		// (Iceberg time travel: even when the table has moved on,
		// docs/iceberg.md).
		t, err = p.OpenBound(ctx, st.Properties, func(b storage.Bucket) storage.Bucket {
			b, ix.srcStats = storage.WithStats(b)
			return b
		})
	default:
		t, err = ix.openSourceTable(ctx, loc)
	}
	if err != nil {
		var se *StaleError
		if errors.As(err, &se) {
			return err
		}
		return fmt.Errorf("index %q: open source: %w", ix.name, err)
	}
	ix.table = t
	if got, want := t.Identity(), st.Properties["table-identity"]; got != want {
		if ix.recorded != nil {
			return fmt.Errorf("index %q: %w: the files %s records give table-identity %s, the snapshot's source-table has %s; run `parqdb index verify %s`",
				ix.name, ErrCorrupt, postings.SnapshotLayout(ix.snap).SourceFiles(), got, want, ix.name)
		}
		return legacyStale(ix.name, ix.snap, t)
	}
	l, err := t.Check(ctx, source.Binding{
		VectorField: ix.snap.VectorField,
		Dim:         int(ix.params.Dimension),
		KeyFields:   ix.snap.SourceKeyFields,
		Metric:      ix.snap.Metric,
	})
	if err != nil {
		return fmt.Errorf("index %q: source binding: %w", ix.name, err)
	}
	if t.NumRows() != ix.snap.IndexedRows {
		return fmt.Errorf("index %q: source binding: %w: source has %d rows, snapshot %d indexed %d",
			ix.name, ErrStale, t.NumRows(), ix.snap.SnapshotID, ix.snap.IndexedRows)
	}
	for i, k := range l.Keys {
		if want := ix.schema.Keys[i].TypeName(); k.TypeName() != want {
			return fmt.Errorf("index %q: source binding: %w: key field %q is %s in the source, %s in the index",
				ix.name, ErrStale, k.Name, k.TypeName(), want)
		}
	}
	ix.layout = l
	ix.fileStart = make([]int64, len(t.Files()))
	var sum int64
	for i, f := range t.Files() {
		ix.fileStart[i] = sum
		sum += f.Rows
	}
	return nil
}

// openSourceTable opens the parquet source at its canonical location (as
// source.OpenLocation records it: an s3:// URL, or an absolute local path
// with a trailing '/' for a folder) through a counting bucket, so that
// StorageStats covers source reads too. When the snapshot records its
// source files (postings.Layout.SourceFiles) it opens exactly those
// (source.OpenRecorded): files added since the build leave the snapshot's
// state intact and only make Stale report them; a recorded file removed
// or rewritten is a *StaleError naming it. A snapshot without the list is
// opened by listing the source, as it was built.
func (ix *Index) openSourceTable(ctx context.Context, loc string) (*source.Table, error) {
	b, prefix, err := sourceBucket(ctx, loc)
	if err != nil {
		return nil, err
	}
	b, ix.srcStats = storage.WithStats(b)
	rec, err := recordedFiles(ctx, ix.wh, ix.snap)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		t, err := source.Open(ctx, b, prefix)
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", loc, err)
		}
		return t, nil
	}
	ix.recorded = rec
	t, d, err := source.OpenRecorded(ctx, b, prefix, rec)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", loc, err)
	}
	s, err := driftStaleness(ix.name, ix.snap, d)
	if err != nil {
		return nil, err
	}
	ix.stale.Store(s)
	return t, nil
}

// StorageStats returns the storage requests and bytes read so far by this
// index, from the warehouse (postings, at open also metadata, centroids and
// manifest) and from the source (footers, key map, vectors, joined rows).
func (ix *Index) StorageStats() (warehouse, src storage.Stats) {
	warehouse = ix.whStats.Snapshot()
	if ix.srcStats != nil {
		src = ix.srcStats.Snapshot()
	}
	return warehouse, src
}

// snapshotState describes the source state snapshot s indexed, for
// StaleError: "N files, M rows", or "M rows" when its summary has no file
// count (snapshots that optimize committed before it recorded one).
func snapshotState(s *metadata.Snapshot) string {
	if n, err := strconv.Atoi(s.Summary["source-files"]); err == nil {
		return filesRows(n, s.IndexedRows)
	}
	return fmt.Sprintf("%d rows", s.IndexedRows)
}

// filesRows is "N files, M rows" ("1 file, …" for one).
func filesRows(files int, rows int64) string {
	if files == 1 {
		return fmt.Sprintf("1 file, %d rows", rows)
	}
	return fmt.Sprintf("%d files, %d rows", files, rows)
}

// Close releases the index's open files. It is safe to call more than once.
func (ix *Index) Close() error {
	if ix.cache != nil {
		ix.cache.close()
	}
	if ix.vstore != nil {
		ix.vstore.close()
	}
	if ix.rows != nil {
		ix.rows.close()
	}
	ix.filters.close()
	if ix.jcols != nil {
		ix.jcols.close()
	}
	var errs []error
	for i, o := range ix.files {
		if o != nil {
			errs = append(errs, o.Close())
			ix.files[i] = nil
		}
	}
	errs = append(errs, ix.closeVectorsFile())
	if ix.table != nil {
		errs = append(errs, ix.table.Close())
		ix.table = nil
	}
	return errors.Join(errs...)
}

// Name returns the index name.
func (ix *Index) Name() string { return ix.name }

// Snapshot returns the opened snapshot. It must not be modified.
func (ix *Index) Snapshot() *metadata.Snapshot { return ix.snap }

// Metadata returns the loaded metadata and its location.
func (ix *Index) Metadata() (*metadata.Metadata, string) { return ix.meta, ix.metaLoc }

// Dim returns the vector dimension.
func (ix *Index) Dim() int { return int(ix.params.Dimension) }

// NList returns the number of lists.
func (ix *Index) NList() int { return int(ix.params.NList) }

// IndexUUID returns the index UUID.
func (ix *Index) IndexUUID() uuid.UUID { return ix.uuid }

// Columns returns the source table's top-level column names.
func (ix *Index) Columns() []string {
	fields := ix.table.Schema().Fields()
	cols := make([]string, len(fields))
	for i, f := range fields {
		cols[i] = f.Name()
	}
	return cols
}

// keys returns the source key index, building it on first use.
func (ix *Index) keys(ctx context.Context) (*source.KeyIndex, error) {
	ix.keyOnce.Do(func() {
		// The index outlives this caller's context: build it to the end.
		ctx := context.WithoutCancel(ctx)
		if kr := ix.manifest.KeyRows; kr != nil {
			ix.keyIndex, ix.keyErr = ix.readKeyRows(ctx, kr)
			if !errors.Is(ix.keyErr, source.ErrSharedHash) {
				return
			}
			// Two keys share a hash (about N²/2^65 likely): the table
			// cannot tell them apart, the source can.
		}
		ix.keyIndex, ix.keyErr = source.BuildKeyIndex(ctx, ix.table, ix.layout)
		if errors.Is(ix.keyErr, source.ErrDuplicateKey) {
			// Builds refuse duplicate keys: say how this index got one.
			ix.keyErr = fmt.Errorf("%w; the source was changed in place or the index was built by a release that did not check keys: make the keys unique, then run `parqdb index refresh %s`",
				ix.keyErr, ix.name)
		}
	})
	return ix.keyIndex, ix.keyErr
}

// readKeyRows reads the persisted key → row map (the key-rows table of a
// version-2 manifest) with one request: far less than the source's key
// columns, and never the source's vectors, which BuildKeyIndex decodes.
func (ix *Index) readKeyRows(ctx context.Context, kr *postings.KeyRowsEntry) (*source.KeyIndex, error) {
	o, err := storage.OpenSized(ctx, ix.wh, kr.Path, kr.Size)
	if err != nil {
		return nil, fmt.Errorf("key map %s: %w", kr.Path, err)
	}
	defer o.Close()
	buf := make([]byte, kr.Size)
	if n, err := o.ReadAt(buf, 0); n < len(buf) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("key map %s: %w: %w; run `parqdb index verify %s`", kr.Path, ErrCorrupt, err, ix.name)
	}
	hs, ords, err := postings.ReadKeyRows(bytes.NewReader(buf), kr.Size, kr.Rows)
	if err != nil {
		return nil, fmt.Errorf("key map %s: %w", kr.Path, err)
	}
	ki, err := source.NewKeyIndexFromSorted(ix.table, ix.layout, hs, ords)
	if err != nil && !errors.Is(err, source.ErrSharedHash) {
		return nil, fmt.Errorf("key map %s: %w: %w", kr.Path, ErrCorrupt, err)
	}
	return ki, err
}

// formatKey formats a canonical key encoding for messages ("id=42"), or
// as hex when it does not decode.
func (ix *Index) formatKey(enc []byte) string {
	vals, err := source.DecodeKey(ix.layout.Keys, enc)
	if err != nil {
		return fmt.Sprintf("%x", enc)
	}
	return source.FormatKey(ix.layout.Keys, vals)
}

// blockedCodes reports whether LVQ8 lists of dimension dim keep their codes
// in the blocked layout (vecmath.BlockU8): when the CPU has the blocked
// kernel (VNNI over whole blocks of 16 rows: 0.54 ns/row at D = 50, about
// 4 times fewer instructions per row than the float kernel; docs/search.md),
// unless a test turned it off or on (forceBlocked).
func blockedCodes(int) bool {
	switch forceBlocked.Load() {
	case 1:
		return true
	case 2:
		return false
	}
	return vecmath.FastBlocked()
}

// forceBlocked: 0 lets blockedCodes decide, 1 forces the blocked layout, 2
// the row layout (tests compare them; set before Open).
var forceBlocked atomic.Int32

// SourceSchema returns the Parquet schema of the source table (its first
// file), whose top-level fields are the columns a join can return.
func (ix *Index) SourceSchema() *parquet.Schema { return ix.table.Schema() }
