package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/ivf"
	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
)

// Env is where the index lives: the warehouse and the catalog.
type Env struct {
	Warehouse storage.Bucket
	Catalog   catalog.Catalog
}

// Defaults of Options.
const (
	// DefaultMemoryLimit bounds the key map of the row join (see
	// Options.MemoryLimit).
	DefaultMemoryLimit = 1 << 30
	// DefaultReferenceBudget is the number of float64 operations (rows × C
	// × D) up to which every row's nearest centroid is also decided by the
	// brute-force reference ivf.ExactNearest (see Options.Exhaustive).
	DefaultReferenceBudget = 1 << 32
	// DefaultMaxExamples is how many problems a failed check names.
	DefaultMaxExamples = 5
)

// Options tune Run. The zero value selects the defaults.
type Options struct {
	// SnapshotID selects the snapshot to verify; 0 means the current one.
	SnapshotID int64
	// Workers is how many goroutines read postings files and check rows;
	// 0 means GOMAXPROCS. It never changes the report's verdict.
	Workers int
	// Progress, if set, is called with a check's name when it starts.
	// Calls come from the goroutine that called Run.
	Progress func(check string)
	// Exhaustive decides the nearest centroid of every row with the
	// brute-force reference ivf.ExactNearest (C·D float64 operations per
	// row) in addition to the exact pruned ivf.Assigner. Without it the
	// reference runs on every row while rows × C × D ≤ ReferenceBudget, and
	// beyond that on a deterministic sample of about ReferenceBudget/(C·D)
	// rows plus every row where the Assigner disagrees with the stored CID.
	Exhaustive bool
	// ReferenceBudget overrides DefaultReferenceBudget.
	ReferenceBudget int64
	// MemoryLimit bounds, approximately, the memory of the row join's key
	// map (about 100 bytes plus the key's length per postings row). An
	// index whose map would exceed it is checked in several partitions of
	// the key space, each reading the postings files and the source once
	// more. 0 means DefaultMemoryLimit.
	MemoryLimit int64
	// MaxExamples is how many problems a failed check names in its
	// Detail (all are counted); 0 means DefaultMaxExamples.
	MaxExamples int
}

func (o Options) withDefaults() (Options, error) {
	if o.SnapshotID < 0 || o.Workers < 0 || o.ReferenceBudget < 0 || o.MemoryLimit < 0 || o.MaxExamples < 0 {
		return o, fmt.Errorf("%w: negative value in %+v", ErrOptions, o)
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.ReferenceBudget == 0 {
		o.ReferenceBudget = DefaultReferenceBudget
	}
	if o.MemoryLimit == 0 {
		o.MemoryLimit = DefaultMemoryLimit
	}
	if o.MaxExamples == 0 {
		o.MaxExamples = DefaultMaxExamples
	}
	return o, nil
}

// The checks, in the order Run reports them.
const (
	CheckCatalog          = "catalog entry"
	CheckMetadata         = "index metadata"
	CheckSnapshot         = "snapshot"
	CheckBinding          = "catalog binding"
	CheckIndexTables      = "index tables"
	CheckCentroidMetadata = "centroid metadata"
	CheckFingerprint      = "centroid fingerprint"
	CheckRoots            = "ivf_roots"
	CheckCentroids        = "ivf_centroids"
	CheckManifest         = "manifest"
	CheckSourceFiles      = "source-files.json"
	CheckSource           = "source binding"
	CheckFiles            = "postings files"
	CheckLayout           = "row-group layout"
	CheckRows             = "postings rows"
	CheckSourceRows       = "source rows"
	CheckKeys             = "postings keys"
	CheckLVQ              = "lvq codes"
	CheckAssignment       = "assignment"
	CheckVectorsFile      = "vectors file"
)

// Checks lists every check name in report order.
var Checks = []string{
	CheckCatalog, CheckMetadata, CheckSnapshot, CheckBinding, CheckIndexTables,
	CheckCentroidMetadata, CheckFingerprint, CheckRoots, CheckCentroids, CheckManifest,
	CheckSourceFiles, CheckSource, CheckFiles, CheckLayout, CheckRows, CheckSourceRows,
	CheckKeys, CheckLVQ, CheckAssignment, CheckVectorsFile,
}

// Run verifies snapshot opts.SnapshotID (default: the current one) of the
// index name against every invariant of the two specs, the clarifications
// and the Parquet provider profile, and returns one Check per name in
// Checks. It returns an error only when it cannot run at all: invalid
// options, an index the catalog does not know, a snapshot that is not
// retained, a cancelled ctx. Everything it finds wrong in the stored
// objects or the source is a failed check; the Report is then not OK.
func Run(ctx context.Context, env Env, name string, opts Options) (*Report, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &runner{env: env, opts: opts, rep: &Report{Index: name}, done: map[string]bool{}}
	defer r.close()
	entry, err := env.Catalog.Load(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("index %q: %w", name, err)
	}
	r.entry = entry
	r.rep.MetadataLocation = entry.MetadataLocation
	stages := []func(context.Context) error{
		r.checkCatalog, r.checkMetadata, r.checkSnapshot, r.checkBinding, r.checkIndexTables,
		r.checkCentroidMetadata, r.checkFingerprint, r.checkRoots, r.checkCentroids, r.checkManifest,
		r.checkSourceFiles, r.checkSource, r.openVectorsFile, r.checkRows, r.checkVectorsFile,
	}
	for _, st := range stages {
		if err := st(ctx); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	// Every check appears once, in the documented order.
	for _, c := range Checks {
		if !r.done[c] {
			r.skip(c, "not reached")
		}
	}
	slices.SortStableFunc(r.rep.Checks, func(a, b Check) int {
		return slices.Index(Checks, a.Name) - slices.Index(Checks, b.Name)
	})
	return r.rep, nil
}

// runner is the state of one Run as it moves through the checks. Each
// stage records its checks and leaves what later stages need; a stage
// whose inputs are missing records its checks as skipped.
type runner struct {
	env  Env
	opts Options
	rep  *Report
	done map[string]bool

	entry     catalog.Entry
	meta      *metadata.Metadata
	snap      *metadata.Snapshot
	params    metadata.IVFParams
	indexUUID uuid.UUID
	postLoc   string
	postings  postings.Layout

	cm      *metadata.CentroidMetadata // strictly parsed, or decoded leniently after a failed parse
	offsets []int32                    // ivf_roots intervals
	roots   []float32                  // ivf_roots centroids, with offsets
	cent    *ivf.Centroids             // set only once roots and leaves validated (Prepare succeeded)

	man      *postings.Manifest
	manRaw   []byte // manifest.json's bytes, which a vectors file is bound to
	srcFiles *postings.SourceFiles
	vf       *vectorsFileCheck // the snapshot's vectors file, when it has one

	// boundSource is the source location the catalog binds, set by
	// checkBinding once the snapshot's source-table is known to be that
	// binding (or, for an older snapshot, to name the same location). The
	// source is opened only through it: a source-table the catalog never
	// bound is never read.
	boundSource string

	table    *source.Table
	layout   *source.Layout
	sourceOK bool // the live source is the indexed state and its schema fits
}

func (r *runner) close() {
	if r.table != nil {
		r.table.Close()
	}
}

func (r *runner) begin(name string) {
	if r.opts.Progress != nil {
		r.opts.Progress(name)
	}
}

func (r *runner) add(name string, st Status, detail string) {
	r.done[name] = true
	r.rep.Checks = append(r.rep.Checks, Check{Name: name, Status: st, Detail: detail})
}

func (r *runner) ok(name, format string, args ...any) {
	r.add(name, StatusOK, fmt.Sprintf(format, args...))
}

func (r *runner) skip(name, why string) { r.add(name, StatusSkipped, why) }

// fail records name as failed with the problems found (at least one).
func (r *runner) fail(name string, p *problems) { r.add(name, StatusFail, p.String()) }

func (r *runner) failf(name, format string, args ...any) {
	r.add(name, StatusFail, fmt.Sprintf(format, args...))
}

// finish records name as ok with detail when p is empty, else as failed.
func (r *runner) finish(name string, p *problems, format string, args ...any) {
	if p.count() == 0 {
		r.ok(name, format, args...)
	} else {
		r.fail(name, p)
	}
}

func (r *runner) newProblems() *problems { return &problems{max: r.opts.MaxExamples} }

// problems collects the problems one check finds: all are counted, the
// first few are kept. It is safe for concurrent use.
type problems struct {
	mu       sync.Mutex
	max      int
	n        int64
	examples []string
}

func (p *problems) add(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if len(p.examples) < p.max {
		p.examples = append(p.examples, fmt.Sprintf(format, args...))
	}
}

func (p *problems) addErr(err error) { p.add("%v", err) }

func (p *problems) count() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

func (p *problems) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := strings.Join(p.examples, "; ")
	if p.n > int64(len(p.examples)) {
		s = fmt.Sprintf("%d problems, first %d: %s", p.n, len(p.examples), s)
	}
	return s
}

// readObject reads a whole warehouse object. A cancelled ctx is returned
// as fatal; any other failure is a problem of the index.
func (r *runner) readObject(ctx context.Context, key string) (data []byte, fatal, problem error) {
	if err := location.Check(key); err != nil {
		return nil, nil, fmt.Errorf("location %q: %w", key, err)
	}
	data, err := storage.ReadAll(ctx, r.env.Warehouse, key)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err(), nil
		}
		return nil, nil, fmt.Errorf("read %s: %w", key, err)
	}
	return data, nil, nil
}

func (r *runner) checkCatalog(ctx context.Context) error {
	r.begin(CheckCatalog)
	e := r.entry
	p := r.newProblems()
	if err := catalog.CheckName(e.Name); err != nil {
		p.addErr(err)
	}
	if err := location.Check(e.MetadataLocation); err != nil {
		p.add("metadata location %q: %v", e.MetadataLocation, err)
	}
	if e.Source.Provider == "" {
		p.add("the source binding has no provider")
	}
	r.finish(CheckCatalog, p, "metadata %s", e.MetadataLocation)
	return nil
}

func (r *runner) checkMetadata(ctx context.Context) error {
	r.begin(CheckMetadata)
	loc := r.entry.MetadataLocation
	data, fatal, problem := r.readObject(ctx, loc)
	if fatal != nil {
		return fatal
	}
	if problem != nil {
		r.failf(CheckMetadata, "%v", problem)
		return nil
	}
	m, err := metadata.ParseFile(loc, data)
	if err != nil {
		r.failf(CheckMetadata, "%v", err)
		return nil
	}
	r.meta = m
	r.ok(CheckMetadata, "format-version %d, %d snapshot(s), current %d", m.FormatVersion, len(m.Snapshots), m.CurrentSnapshotID)
	return nil
}

func (r *runner) checkSnapshot(ctx context.Context) error {
	r.begin(CheckSnapshot)
	m := r.meta
	if m == nil {
		r.skip(CheckSnapshot, "index metadata unreadable")
		return nil
	}
	id := r.opts.SnapshotID
	if id == 0 {
		id = m.CurrentSnapshotID
	}
	s, ok := m.Snapshot(id)
	if !ok {
		var ids []string
		for _, s := range m.Snapshots {
			ids = append(ids, fmt.Sprint(s.SnapshotID))
		}
		return fmt.Errorf("%w: index %q has no snapshot %d (retained: %s)", ErrNoSnapshot, r.rep.Index, id, strings.Join(ids, ", "))
	}
	r.rep.SnapshotID = id
	params, err := s.IVF()
	if err != nil {
		r.failf(CheckSnapshot, "snapshot %d: %v", id, err)
		return nil
	}
	u, err := uuid.Parse(m.IndexUUID)
	if err != nil {
		r.failf(CheckSnapshot, "index-uuid %q: %v", m.IndexUUID, err)
		return nil
	}
	p := r.newProblems()
	if s.IndexedRows != params.NTotal {
		p.add("indexed-rows %d differs from ntotal %d", s.IndexedRows, params.NTotal)
	}
	if int64(params.NList) > params.NTotal {
		p.add("nlist %d exceeds ntotal %d", params.NList, params.NTotal)
	}
	if p.count() > 0 {
		r.fail(CheckSnapshot, p)
		return nil
	}
	r.snap, r.params, r.indexUUID = s, params, u
	cur := ""
	if id == m.CurrentSnapshotID {
		cur = "current, "
	}
	r.ok(CheckSnapshot, "snapshot %d (%ssequence %d): %s %s, dimension %d, nlist %d, ntotal %d",
		id, cur, s.SequenceNumber, params.PostingEncoding, s.Metric, params.Dimension, params.NList, params.NTotal)
	return nil
}

func (r *runner) checkBinding(ctx context.Context) error {
	r.begin(CheckBinding)
	bound := r.entry.Source
	switch {
	case r.snap == nil:
		r.skip(CheckBinding, "no valid snapshot")
	case r.snap.SnapshotID != r.meta.CurrentSnapshotID:
		// An older snapshot may be checked against the bound source only
		// where it names the same table: the identity check then reports
		// the source's changes since.
		if bound.Provider == r.snap.SourceTable.Provider && bound.Properties["location"] == r.snap.SourceTable.Properties["location"] {
			r.boundSource = bound.Properties["location"]
		}
		r.skip(CheckBinding, "the catalog binds the current snapshot's source, not this one's")
	case !catalog.SameTable(bound, r.snap.SourceTable):
		r.failf(CheckBinding, "catalog source binding does not match: the catalog binds %s, the snapshot's source-table is %s (the metadata file or the catalog was changed outside parqdb)",
			jsonString(bound), jsonString(r.snap.SourceTable))
	default:
		r.boundSource = bound.Properties["location"]
		r.ok(CheckBinding, "catalog binding equals source-table %s", r.boundSource)
	}
	return nil
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func (r *runner) checkIndexTables(ctx context.Context) error {
	r.begin(CheckIndexTables)
	s := r.snap
	if s == nil {
		r.skip(CheckIndexTables, "no valid snapshot")
		return nil
	}
	p := r.newProblems()
	if s.IndexProvider.Provider != postings.Provider || len(s.IndexProvider.Properties) != 0 {
		p.add("index-provider is %s, want {\"provider\":%q,\"properties\":{}}", jsonString(s.IndexProvider), postings.Provider)
	}
	for _, role := range []string{metadata.RoleCentroids, metadata.RolePostings} {
		d, ok := s.IndexTables[role]
		if !ok {
			p.add("index-tables has no %s", role)
			continue
		}
		if err := postings.CheckIndexTable(role, d.DefinitionVersion, d.Properties, r.indexUUID); err != nil {
			p.add("index-tables.%s: %v", role, err)
		}
	}
	if p.count() > 0 {
		r.fail(CheckIndexTables, p)
		return nil
	}
	r.postings = postings.SnapshotLayout(s)
	r.postLoc = r.postings.Table
	r.ok(CheckIndexTables, "ivf_centroids %s, ivf_postings %s", s.IndexTables[metadata.RoleCentroids].Properties["location"], r.postLoc)
	return nil
}

func (r *runner) checkCentroidMetadata(ctx context.Context) error {
	r.begin(CheckCentroidMetadata)
	if r.snap == nil {
		r.skip(CheckCentroidMetadata, "no valid snapshot")
		return nil
	}
	loc := r.params.CentroidsLocation
	data, fatal, problem := r.readObject(ctx, loc)
	if fatal != nil {
		return fatal
	}
	if problem != nil {
		r.failf(CheckCentroidMetadata, "%v", problem)
		return nil
	}
	p := r.newProblems()
	cm, err := metadata.ParseCentroidFile(loc, data)
	if err != nil {
		p.addErr(err)
		// Keep going with a lenient decode, so that the fingerprint and
		// the tables are still checked and reported on their own.
		var loose metadata.CentroidMetadata
		if json.Unmarshal(data, &loose) == nil {
			r.cm = &loose
		}
		r.fail(CheckCentroidMetadata, p)
		return nil
	}
	r.cm = cm
	if err := metadata.CheckSnapshotAgainstCentroid(r.snap, cm); err != nil {
		p.addErr(err)
	}
	if art, err := uuid.Parse(cm.ArtifactUUID); err == nil {
		if want := postings.CentroidMetadataLocation(art); loc != want {
			p.add("%s: the artifact's metadata belongs at %s", loc, want)
		}
		if want := postings.CentroidsLocation(art); cm.Centroids != want {
			p.add("%s: centroids %q, the profile requires %q", loc, cm.Centroids, want)
		}
		if want := postings.RootsLocation(art); cm.Roots != want {
			p.add("%s: roots %q, the profile requires %q", loc, cm.Roots, want)
		}
	}
	r.finish(CheckCentroidMetadata, p, "%s: artifact %s, descriptor matches the snapshot", loc, cm.ArtifactUUID)
	return nil
}

func (r *runner) checkFingerprint(ctx context.Context) error {
	r.begin(CheckFingerprint)
	if r.snap == nil {
		r.skip(CheckFingerprint, "no valid snapshot")
		return nil
	}
	p := r.newProblems()
	// From the snapshot's own identity fields, independently of the
	// centroid document.
	fromSnap := metadata.Fingerprint(metadata.Descriptor{
		VectorField:              r.snap.VectorField,
		Dimension:                r.params.Dimension,
		Metric:                   r.snap.Metric,
		NList:                    r.params.NList,
		ClusteringProfileVersion: metadata.ClusteringProfileV1,
	})
	if r.params.Fingerprint != fromSnap {
		p.add("parameter ivf_centroids_fingerprint %s, but the snapshot's descriptor fields give %s", r.params.Fingerprint, fromSnap)
	}
	if r.cm != nil {
		fromDoc := metadata.Fingerprint(r.cm.Descriptor)
		if r.cm.Fingerprint != fromDoc {
			p.add("centroid metadata fingerprint %s, but its descriptor gives %s", r.cm.Fingerprint, fromDoc)
		}
		if r.cm.Fingerprint != r.params.Fingerprint {
			p.add("centroid metadata fingerprint %s differs from parameter ivf_centroids_fingerprint %s", r.cm.Fingerprint, r.params.Fingerprint)
		}
	}
	r.finish(CheckFingerprint, p, "%s recomputed from %s", fromSnap, metadata.FingerprintName(metadata.Descriptor{
		VectorField: r.snap.VectorField, Dimension: r.params.Dimension, Metric: r.snap.Metric,
		NList: r.params.NList, ClusteringProfileVersion: metadata.ClusteringProfileV1,
	}))
	return nil
}

// openTable opens the single Parquet file of a centroid table folder and
// checks that the folder holds nothing else.
func (r *runner) openTable(ctx context.Context, folder, file string, p *problems) (storage.Object, error) {
	if err := location.Check(folder); err != nil || !strings.HasSuffix(folder, "/") {
		p.add("table location %q is not a warehouse-relative folder", folder)
		return nil, nil
	}
	infos, err := r.env.Warehouse.List(ctx, folder)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		p.add("list %s: %v", folder, err)
		return nil, nil
	}
	for _, in := range infos {
		if in.Key != folder+file {
			p.add("%s holds %s besides %s", folder, in.Key, file)
		}
	}
	obj, err := r.env.Warehouse.Open(ctx, folder+file)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		p.add("open %s: %v", folder+file, err)
		return nil, nil
	}
	return obj, nil
}

func (r *runner) checkRoots(ctx context.Context) error {
	r.begin(CheckRoots)
	if r.cm == nil {
		r.skip(CheckRoots, "no centroid metadata")
		return nil
	}
	p := r.newProblems()
	obj, err := r.openTable(ctx, r.cm.Roots, postings.RootsFile, p)
	if err != nil {
		return err
	}
	if obj == nil {
		r.fail(CheckRoots, p)
		return nil
	}
	defer obj.Close()
	offsets, roots, err := postings.ReadRoots(obj, obj.Size(), int(r.params.Dimension))
	if err != nil {
		p.add("%s: %v", r.cm.Roots+postings.RootsFile, err)
		r.fail(CheckRoots, p)
		return nil
	}
	if c := offsets[len(offsets)-1]; c != r.params.NList {
		p.add("the roots cover %d leaves, nlist is %d", c, r.params.NList)
	}
	if p.count() > 0 {
		r.fail(CheckRoots, p)
		return nil
	}
	r.offsets, r.roots = offsets, roots
	r.ok(CheckRoots, "%d roots covering [0, %d)", len(offsets)-1, r.params.NList)
	return nil
}

func (r *runner) checkCentroids(ctx context.Context) error {
	r.begin(CheckCentroids)
	if r.cm == nil {
		r.skip(CheckCentroids, "no centroid metadata")
		return nil
	}
	p := r.newProblems()
	obj, err := r.openTable(ctx, r.cm.Centroids, postings.CentroidsFile, p)
	if err != nil {
		return err
	}
	if obj == nil {
		r.fail(CheckCentroids, p)
		return nil
	}
	defer obj.Close()
	dim := int(r.params.Dimension)
	cidBucket, offs, scales, codes, err := postings.ReadCentroids(obj, obj.Size(), dim)
	if err != nil {
		p.add("%s: %v", r.cm.Centroids+postings.CentroidsFile, err)
		r.fail(CheckCentroids, p)
		return nil
	}
	if len(cidBucket) != int(r.params.NList) {
		p.add("%d rows, nlist is %d", len(cidBucket), r.params.NList)
	}
	if r.offsets == nil {
		p.add("hierarchy not checked: ivf_roots is invalid")
		r.fail(CheckCentroids, p)
		return nil
	}
	if err := postings.CheckHierarchy(cidBucket, r.offsets); err != nil {
		p.addErr(err)
	}
	if p.count() > 0 {
		r.fail(CheckCentroids, p)
		return nil
	}
	c := &ivf.Centroids{Dim: dim, NList: int(r.params.NList), Roots: r.roots, CIDOffsets: r.offsets,
		Offsets: offs, Scales: scales, Codes: codes}
	if err := c.Prepare(); err != nil { // Validate, then decode the leaves once
		p.add("%s: %v", r.cm.Centroids+postings.CentroidsFile, err)
		r.fail(CheckCentroids, p)
		return nil
	}
	// Only a validated artifact reaches the assignment check: an invalid
	// or missing table makes that check skipped, never a panic in ivf.
	r.cent = c
	r.ok(CheckCentroids, "%d leaves, cid_bucket agrees with the root intervals, reconstructions finite", c.NList)
	return nil
}

func (r *runner) checkManifest(ctx context.Context) error {
	r.begin(CheckManifest)
	if r.postLoc == "" {
		r.skip(CheckManifest, "no valid ivf_postings location")
		return nil
	}
	key := r.postings.Manifest()
	data, fatal, problem := r.readObject(ctx, key)
	if fatal != nil {
		return fatal
	}
	if problem != nil {
		r.failf(CheckManifest, "%v", problem)
		return nil
	}
	m, err := postings.ParseManifest(data)
	if err != nil {
		r.failf(CheckManifest, "%s: %v", key, err)
		return nil
	}
	p := r.newProblems()
	if err := m.CheckLocation(r.postLoc); err != nil {
		p.add("%s: %v", key, err)
	}
	if r.offsets != nil {
		if err := m.CheckRoots(r.offsets); err != nil {
			p.add("%s: %v", key, err)
		}
	} else {
		p.add("%s: root buckets not checked: ivf_roots is invalid", key)
	}
	if m.Encoding != r.params.PostingEncoding {
		p.add("%s: posting-encoding %s, parameter posting_encoding %s", key, m.Encoding, r.params.PostingEncoding)
	}
	if m.Dim != int(r.params.Dimension) {
		p.add("%s: dimension %d, parameter %d", key, m.Dim, r.params.Dimension)
	}
	if m.NList != r.params.NList {
		p.add("%s: nlist %d, parameter %d", key, m.NList, r.params.NList)
	}
	if m.Rows != r.params.NTotal || m.Rows != r.snap.IndexedRows {
		p.add("%s: rows %d, ntotal %d, indexed-rows %d", key, m.Rows, r.params.NTotal, r.snap.IndexedRows)
	}
	if len(m.KeyTypes) != len(r.snap.SourceKeyFields) {
		p.add("%s: %d key types for %d source-key-fields", key, len(m.KeyTypes), len(r.snap.SourceKeyFields))
	}
	if err := r.checkTableObjects(ctx, m, p); err != nil {
		return err
	}
	r.man = m // the file checks still run against it
	r.manRaw = data
	r.finish(CheckManifest, p, "%d rows, %d CIDs, %d files, %d row groups", m.Rows, m.CIDs, len(m.Files), len(m.RowGroups))
	return nil
}

// checkTableObjects lists the postings table location and adds a problem
// for every object in it that is not one of the manifest's postings files
// (profile §4): a reader that takes the location as a table (DuckDB's
// read_parquet('<location>/**/*.parquet'), Spark, Arrow datasets) would
// read it as postings. A version-1 table also holds its side objects,
// which are allowed by name.
func (r *runner) checkTableObjects(ctx context.Context, m *postings.Manifest, p *problems) error {
	infos, err := r.env.Warehouse.List(ctx, r.postLoc)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p.add("list %s: %v", r.postLoc, err)
		return nil
	}
	listed := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		listed[f.Path] = true
	}
	inline := r.postings.Meta == r.postings.Table
	for _, in := range infos {
		if listed[in.Key] || inline && postings.IsInlineSideObject(strings.TrimPrefix(in.Key, r.postLoc)) {
			continue
		}
		p.add("table location %s holds %s, which is not a postings file of the manifest: a reader of the table would take it for postings", r.postLoc, in.Key)
	}
	return nil
}

func (r *runner) checkSourceFiles(ctx context.Context) error {
	r.begin(CheckSourceFiles)
	if r.postLoc == "" {
		r.skip(CheckSourceFiles, "no valid ivf_postings location")
		return nil
	}
	key := r.postings.SourceFiles()
	data, fatal, problem := r.readObject(ctx, key)
	if fatal != nil {
		return fatal
	}
	if problem != nil {
		r.failf(CheckSourceFiles, "%v", problem)
		return nil
	}
	sf, err := postings.ParseSourceFiles(data)
	if err != nil {
		r.failf(CheckSourceFiles, "%s: %v", key, err)
		return nil
	}
	p := r.newProblems()
	files := make([]sourceFile, len(sf.Files))
	var rows int64
	for i, f := range sf.Files {
		files[i] = sourceFile{f.Key, f.Size, f.Version}
		rows += f.Rows
		if i > 0 && sf.Files[i-1].Key >= f.Key {
			p.add("%s: files[%d] %q is not after %q", key, i, f.Key, sf.Files[i-1].Key)
		}
		if f.Size < 0 || f.Rows < 0 || (!strings.HasPrefix(f.Version, "etag:") && !strings.HasPrefix(f.Version, "mtime:")) {
			p.add("%s: files[%d] %q: size %d, rows %d, version %q", key, i, f.Key, f.Size, f.Rows, f.Version)
		}
	}
	id := tableIdentity(files)
	if prov, _ := source.Lookup(r.snap.SourceTable.Provider); prov != nil {
		id = providerIdentity(prov, r.snap.SourceTable.Properties, sf)
	}
	if id != sf.TableIdentity {
		p.add("%s: the files give table-identity %s, the file says %s", key, id, sf.TableIdentity)
	}
	if want := r.snap.SourceTable.Properties["table-identity"]; id != want {
		p.add("%s: the files give table-identity %s, the snapshot's source-table has %s", key, id, want)
	}
	if rows != r.params.NTotal {
		p.add("%s: the files hold %d rows, ntotal is %d", key, rows, r.params.NTotal)
	}
	r.srcFiles = sf
	r.finish(CheckSourceFiles, p, "%d files, %d rows, identity recomputed", len(sf.Files), rows)
	return nil
}

func (r *runner) checkSource(ctx context.Context) error {
	r.begin(CheckSource)
	s := r.snap
	if s == nil {
		r.skip(CheckSource, "no valid snapshot")
		return nil
	}
	p := r.newProblems()
	props := s.SourceTable.Properties
	loc := props["location"]
	var t *source.Table
	prov, err := source.Lookup(s.SourceTable.Provider)
	switch {
	case err != nil:
		r.failf(CheckSource, "source-table provider %q: %v", s.SourceTable.Provider, err)
		return nil
	case prov != nil:
		t = r.openProviderSource(ctx, p, prov, props)
	default:
		if t, err = r.openParquetSource(ctx, p, props); err != nil {
			return err
		}
	}
	if t == nil {
		return nil
	}
	r.table = t
	if n := t.NumRows(); n != s.IndexedRows {
		p.add("source %s has %d rows, indexed-rows is %d", loc, n, s.IndexedRows)
	}
	l, err := t.Check(ctx, source.Binding{VectorField: s.VectorField, Dim: int(r.params.Dimension), KeyFields: s.SourceKeyFields, Metric: s.Metric})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p.addErr(err)
	} else {
		r.layout = l
		if r.man != nil {
			if schema, err := r.schemaOf(l); err != nil {
				p.addErr(err)
			} else if err := r.man.CheckSchema(schema); err != nil {
				p.add("the source key types differ from the manifest's: %v", err)
			}
		}
	}
	r.sourceOK = p.count() == 0
	var keyTypes []string
	if l != nil {
		for _, k := range l.Keys {
			keyTypes = append(keyTypes, k.Name+" "+k.TypeName())
		}
	}
	r.finish(CheckSource, p, "%s: %d files, %d rows, identity unchanged, vector %s dimension %d, key (%s)",
		loc, len(t.Files()), t.NumRows(), s.VectorField, r.params.Dimension, strings.Join(keyTypes, ", "))
	return nil
}

// openParquetSource opens a parquet source-table and checks its identity
// against the snapshot's; nil (with the check already failed or skipped)
// when it cannot be read.
func (r *runner) openParquetSource(ctx context.Context, p *problems, props map[string]string) (*source.Table, error) {
	s := r.snap
	if s.SourceTable.Provider != postings.Provider {
		r.failf(CheckSource, "source-table provider %q, only %s supported", s.SourceTable.Provider, supportedProviders())
		return nil, nil
	}
	if err := postings.CheckSourceProperties(props); err != nil {
		r.failf(CheckSource, "source-table properties: %v", err)
		return nil, nil
	}
	loc := props["location"]
	if r.boundSource == "" || loc != r.boundSource {
		// Never open a location the catalog did not bind: a tampered
		// metadata file must not make verify read (and quote) any file
		// or bucket it names.
		r.skip(CheckSource, fmt.Sprintf("source-table location %q is not the source the catalog binds; not read", loc))
		return nil, nil
	}
	t, canon, err := source.OpenLocation(ctx, loc)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r.failf(CheckSource, "open source %s: %v", loc, err)
		return nil, nil
	}
	if canon != loc {
		p.add("source location %q is not canonical (%q)", loc, canon)
	}
	var live []sourceFile
	for _, f := range t.Files() {
		live = append(live, sourceFile{f.Key, f.Size, f.Version()})
	}
	id := tableIdentity(live)
	if id != t.Identity() {
		p.add("source %s: recomputed identity %s, the source reader says %s", loc, id, t.Identity())
	}
	identityOK := id == props["table-identity"]
	if !identityOK {
		p.add("source %s changed since snapshot %d: table-identity is now %s, the snapshot has %s%s (`parqdb index refresh` brings the index up to date)",
			loc, s.SnapshotID, id, props["table-identity"], r.describeChange(t))
	}
	if r.srcFiles != nil {
		for _, f := range t.Files() {
			i, found := slices.BinarySearchFunc(r.srcFiles.Files, f.Key, func(a postings.SourceFile, k string) int { return strings.Compare(a.Key, k) })
			if found && identityOK && r.srcFiles.Files[i].Rows != f.Rows {
				p.add("source file %s has %d rows, source-files.json says %d", f.Key, f.Rows, r.srcFiles.Files[i].Rows)
			}
		}
	}
	return t, nil
}

// describeChange names the files that differ from source-files.json.
func (r *runner) describeChange(t *source.Table) string {
	if r.srcFiles == nil {
		return ""
	}
	old := map[string]postings.SourceFile{}
	for _, f := range r.srcFiles.Files {
		old[f.Key] = f
	}
	var parts []string
	for _, f := range t.Files() {
		o, ok := old[f.Key]
		switch {
		case !ok:
			parts = append(parts, "added "+f.Key)
		case o.Size != f.Size || o.Version != f.Version():
			parts = append(parts, "rewritten "+f.Key)
		}
		delete(old, f.Key)
	}
	for k := range old {
		parts = append(parts, "removed "+k)
	}
	slices.Sort(parts)
	if len(parts) == 0 {
		return ""
	}
	if len(parts) > 5 {
		parts = append(parts[:5], fmt.Sprintf("… %d more", len(parts)-5))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// schemaOf is the postings schema the snapshot and the source layout call
// for.
func (r *runner) schemaOf(l *source.Layout) (postings.Schema, error) {
	s := postings.Schema{Encoding: r.params.PostingEncoding, Dim: int(r.params.Dimension)}
	for _, k := range l.Keys {
		kt, err := postings.ParseKeyType(k.TypeName())
		if err != nil {
			return s, fmt.Errorf("source key field %q: %w", k.Name, err)
		}
		kt.Name = k.Name
		s.Keys = append(s.Keys, kt)
	}
	return s, s.Validate()
}
