package indexer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/parqdb/parqdb/artifact"
	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/ivf"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
)

// Env is where a build reads and writes: the warehouse and the catalog.
type Env struct {
	Warehouse storage.Bucket
	Catalog   catalog.Catalog
}

// Result summarises a committed build.
type Result struct {
	Name             string
	MetadataLocation string
	Metadata         *metadata.Metadata
	Rows             int64
	Dim              int
	NList            int
	Roots            int
	SampleRows       int
	Encoding         string
	ReusedCentroids  bool
	// CentroidsMetadataLocation is the centroid artifact's metadata file.
	CentroidsMetadataLocation string
	Stages                    []StageTime
	BytesWritten              int64
	Files                     int
	Warnings                  []string
}

// StageTime is the wall time of one stage.
type StageTime struct {
	Stage    string
	Duration time.Duration
}

// Create builds a new index from opts.Source and registers it in the
// catalog under opts.Name. Nothing is committed unless every stage
// succeeds; files written by a failed build are deleted (best effort) and
// are in any case referenced by no metadata.
func Create(ctx context.Context, env Env, opts Options) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if _, err := env.Catalog.Load(ctx, opts.Name); err == nil {
		return nil, fmt.Errorf("index %q: %w (use `parqdb index refresh` to update it, or drop it first)", opts.Name, catalog.ErrExists)
	} else if !errors.Is(err, catalog.ErrNotFound) {
		return nil, err
	}
	b := &builder{env: env, opts: opts, indexUUID: uuid.New(), op: "create"}
	b.setPostings(postings.PostingsLocation(b.indexUUID, 1, rand.Uint64()))
	defer b.close()
	res, err := b.run(ctx)
	if err != nil {
		b.cleanup()
		return nil, err
	}
	return res, nil
}

// builder holds the state of one build as it moves through the stages.
type builder struct {
	env       Env
	opts      Options
	indexUUID uuid.UUID

	table  *source.Table
	layout *source.Layout
	srcLoc string
	rows   int64
	nlist  int

	sample     []float32
	sampleRows int
	art        *artifact.Artifact
	reused     bool

	schema      postings.Schema
	spill       *spill
	vspill      *spill       // exact vectors by root bucket, for the vectors file
	baseVec     *baseVectors // the base's vectors file, kept rows for the successor's
	manifestRaw []byte       // manifest.json as written
	keySpill    *keySpill    // key map of a full scan, for the key-rows table
	postingsLoc string       // where postings files go: the table location, or a shard's name prefix in it
	metaLoc     string       // where the manifest and side objects go (postings.Layout.Meta)
	pieceKeys   []string     // a sharded commit: the objects its listing of the table location found
	manifest    *postings.Manifest

	// Refresh state: the base the successor is built on, the view of new
	// files an incremental refresh assigns, and the base's postings files
	// it keeps.
	op         string // summary operation: create, refresh, refresh-incremental
	base       *metadata.Metadata
	baseSnap   *metadata.Snapshot
	scanTable  *source.Table
	scanLayout *source.Layout
	baseFiles  []postings.FileEntry
	detail     map[string]string // extra summary entries

	// Optimize state: the base's source binding and source file list are
	// kept as they are; postings rows come from the base's postings.
	keepSource      *metadata.TableDefinition
	keepSourceFiles []byte
	dim             int
	readBucket      func(ctx context.Context, bucket int) ([]postings.Row, error)

	committed    *metadata.Metadata
	committedLoc string

	written  []string // warehouse keys written, for cleanup on failure
	bytes    int64
	stages   []StageTime
	warnings []string
}

// step is one pipeline stage.
type step struct {
	stage string
	fn    func(context.Context) error
}

func (b *builder) run(ctx context.Context) (*Result, error) {
	steps := []step{
		{StageScan, b.scanSource},
		{StageTrain, b.train},
		{StageAssign, b.assign},
		{StageWrite, b.writePostings},
	}
	if b.opts.VectorsFile {
		steps = append(steps, step{StageVectors, b.writeVectors})
	}
	return b.runSteps(ctx, append(steps, step{StageCommit, b.commit}))
}

func (b *builder) runSteps(ctx context.Context, steps []step) (*Result, error) {
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		start := time.Now()
		if err := s.fn(ctx); err != nil {
			return nil, err
		}
		d := time.Since(start)
		b.stages = append(b.stages, StageTime{s.stage, d})
		b.opts.Progress.End(s.stage, d)
	}
	return &Result{
		Name:                      b.opts.Name,
		MetadataLocation:          b.committedLoc,
		Metadata:                  b.committed,
		Rows:                      b.rows,
		Dim:                       b.dim,
		NList:                     b.nlist,
		Roots:                     b.art.Centroids.NumRoots(),
		SampleRows:                b.sampleRows,
		Encoding:                  b.opts.Encoding,
		ReusedCentroids:           b.reused,
		CentroidsMetadataLocation: b.art.Location,
		Stages:                    b.stages,
		BytesWritten:              b.bytes,
		Files:                     len(b.written),
		Warnings:                  b.warnings,
	}, nil
}

func (b *builder) warn(msg string) {
	b.warnings = append(b.warnings, msg)
	b.opts.Progress.Warn(msg)
}

func (b *builder) close() {
	if b.table != nil {
		b.table.Close()
	}
	if b.spill != nil {
		b.spill.remove()
	}
	if b.vspill != nil {
		b.vspill.remove()
	}
	if b.baseVec != nil {
		b.baseVec.obj.Close()
	}
	if b.keySpill != nil {
		b.keySpill.remove()
	}
}

// cleanup deletes what a failed build wrote. No metadata references these
// files, so a failure here only leaves work for gc.
func (b *builder) cleanup() {
	ctx := context.Background()
	for _, k := range b.written {
		_ = b.env.Warehouse.Delete(ctx, k)
	}
}

// scanSource opens the source, checks its schema and contract row by row
// (unique keys included), and takes the seeded training sample in the same
// pass.
func (b *builder) scanSource(ctx context.Context) error {
	if b.table == nil {
		t, canon, err := source.OpenAny(ctx, b.opts.Source)
		if err != nil {
			return err
		}
		b.table, b.srcLoc = t, canon
	}
	t := b.table
	l, err := t.Check(ctx, source.Binding{VectorField: b.opts.VectorField, KeyFields: b.opts.KeyFields, Metric: b.opts.Metric})
	if err != nil {
		return err
	}
	b.layout, b.dim = l, l.Dim
	b.rows = t.NumRows()
	n := b.rows
	b.nlist = b.opts.NList
	if b.nlist == 0 {
		b.nlist = DefaultNList(n)
	}
	if int64(b.nlist) > n {
		return fmt.Errorf("%w: nlist %d exceeds the %d rows of source %s (nlist must not exceed ntotal)", ErrOptions, b.nlist, n, b.srcLoc)
	}
	if n < int64(b.nlist)*MinRowsPerList {
		b.warn(fmt.Sprintf("only %.1f rows per list (%d rows, nlist %d): recall suffers below %d; consider --nlist %d",
			float64(n)/float64(b.nlist), n, b.nlist, MinRowsPerList, max(1, n/MinRowsPerList)))
	}
	sampleRows := b.opts.SampleRows
	if sampleRows == 0 {
		sampleRows = DefaultSampleRows(n, l.Dim, b.nlist)
	}
	sampleRows = int(min(int64(sampleRows), n))
	if sampleRows < b.nlist {
		return fmt.Errorf("%w: sample of %d rows is smaller than nlist %d", ErrOptions, sampleRows, b.nlist)
	}
	picks := samplePositions(n, sampleRows, b.opts.Seed)
	b.sampleRows = sampleRows
	dim := l.Dim
	b.sample = make([]float32, 0, sampleRows*dim)
	p := b.opts.Progress
	p.Start(StageScan, n)
	var pos int64
	next := 0
	// The key → row map of the whole source, persisted as the key-rows
	// table (profile §9.5) so that readers need not rebuild it.
	if b.keySpill != nil {
		b.keySpill.remove()
	}
	if b.keySpill, err = newKeySpill(b.opts.TempDir); err != nil {
		return err
	}
	var scratch []byte
	err = t.Scan(ctx, l, 0, func(batch *source.Batch) error {
		for i := 0; i < batch.N; i++ {
			if next < len(picks) && picks[next] == pos {
				b.sample = append(b.sample, batch.Vector(i)...)
				next++
			}
			scratch = batch.AppendKey(scratch[:0], i)
			if err := b.keySpill.add(source.StableKeyHash(scratch), pos); err != nil {
				return err
			}
			pos++
		}
		p.Add(int64(batch.N))
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	if pos != n {
		return fmt.Errorf("source %s: scanned %d rows, footers say %d", b.srcLoc, pos, n)
	}
	// Keys are unique (ivf-index-schema §8): a duplicate would make every
	// join ambiguous, so it fails the build before anything is written.
	// The check runs on the key map's hash partitions (16·N/256 bytes in
	// memory at a time); only rows whose hashes are shared have their
	// exact keys compared.
	shared, err := b.keySpill.shared(ctx)
	if err != nil {
		return err
	}
	return source.CheckSharedKeys(ctx, t, l, shared)
}

// samplePositions returns k distinct row positions in [0, n), ascending,
// chosen by a seeded generator (Floyd's algorithm): deterministic for a
// given n, k and seed.
func samplePositions(n int64, k int, seed uint64) []int64 {
	if int64(k) >= n {
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(i)
		}
		return out
	}
	rng := rand.New(rand.NewPCG(seed, 0x5ca1ab1e))
	chosen := make(map[int64]struct{}, k)
	out := make([]int64, 0, k)
	for j := n - int64(k); j < n; j++ {
		t := rng.Int64N(j + 1)
		if _, dup := chosen[t]; dup {
			t = j
		}
		chosen[t] = struct{}{}
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// train reuses a matching centroid artifact or trains a new one.
func (b *builder) train(ctx context.Context) error {
	if b.opts.Encoding == metadata.EncodingLVQ4 {
		b.checkLVQ4()
	}
	desc := metadata.Descriptor{
		VectorField:              b.opts.VectorField,
		Dimension:                int32(b.layout.Dim),
		Metric:                   b.opts.Metric,
		NList:                    int32(b.nlist),
		ClusteringProfileVersion: 1,
	}
	if b.opts.ReuseCentroids == ReuseAuto {
		a, err := artifact.FindReusable(ctx, b.env.Catalog, b.env.Warehouse, b.srcTable(), desc)
		if err != nil {
			return err
		}
		if a != nil {
			b.art, b.reused, b.sample = a, true, nil
			return nil
		}
	}
	p := b.opts.Progress
	cfg := ivf.TrainConfig{
		NList:      b.nlist,
		Roots:      b.opts.Roots,
		Seed:       b.opts.Seed,
		Iterations: b.opts.Iterations,
		Workers:    b.opts.Workers,
	}
	// Progress counts Lloyd iterations against the training budget.
	last, lastTotal := 0, cfg.ProgressTotal()
	p.Start(StageTrain, int64(lastTotal))
	cfg.Progress = func(done, total int) {
		if t, ok := p.(ProgressTotaler); ok && total != lastTotal {
			t.SetTotal(int64(total))
		}
		p.Add(int64(done - last))
		last, lastTotal = done, total
	}
	c, rep, err := ivf.Train(ctx, b.sample, b.layout.Dim, cfg)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	for _, w := range rep.Warnings {
		b.warn(w)
	}
	b.sample = nil
	a, w, err := artifact.Write(ctx, b.env.Warehouse, c, desc, b.opts.Now().UnixMilli())
	b.written = append(b.written, w.Keys...)
	b.bytes += w.Bytes
	if err != nil {
		return err
	}
	b.art = a
	return nil
}

// writeObject writes a new warehouse object (storage.WriteWith) and
// records it for accounting and cleanup.
func (b *builder) writeObject(ctx context.Context, key string, data []byte) error {
	n, err := storage.WriteWith(ctx, b.env.Warehouse, key, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	b.written = append(b.written, key)
	b.bytes += n
	return nil
}

// srcTable is the source-table definition of the exact source state.
func (b *builder) srcTable() metadata.TableDefinition {
	if b.keepSource != nil {
		return *b.keepSource
	}
	return tableDefinition(b.table, b.srcLoc)
}

// setPostings makes loc, a postings table location, the folder this build
// writes, in the current layout (postings.PostingsVersion).
func (b *builder) setPostings(loc string) {
	b.postingsLoc, b.metaLoc = loc, postings.LayoutOf(loc, postings.PostingsVersion).Meta
}

// snapshot is the snapshot this build publishes.
func (b *builder) snapshot() metadata.Snapshot {
	c := b.art.Meta
	return metadata.Snapshot{
		TimestampMs:        b.opts.Now().UnixMilli(),
		Summary:            b.summary(),
		SourceTable:        b.srcTable(),
		VectorField:        b.opts.VectorField,
		SourceKeyFields:    slices.Clone(b.opts.KeyFields),
		IndexedRows:        b.rows,
		IndexFamily:        metadata.FamilyIVF,
		IndexSchemaVersion: metadata.IVFSchemaVersion,
		Metric:             b.opts.Metric,
		Parameters: map[string]string{
			metadata.ParamDimension:         strconv.Itoa(b.dim),
			metadata.ParamNList:             strconv.Itoa(b.nlist),
			metadata.ParamNTotal:            strconv.FormatInt(b.rows, 10),
			metadata.ParamPostingEncoding:   b.opts.Encoding,
			metadata.ParamFingerprint:       c.Fingerprint,
			metadata.ParamCentroidsUUID:     c.ArtifactUUID,
			metadata.ParamCentroidsLocation: b.art.Location,
		},
		IndexProvider: metadata.ProviderDefinition{Provider: postings.Provider, Properties: map[string]string{}},
		IndexTables: map[string]metadata.IndexTableDefinition{
			metadata.RoleCentroids: {DefinitionVersion: 1, Properties: map[string]string{"location": c.Centroids}},
			metadata.RolePostings:  {DefinitionVersion: postings.PostingsVersion, Properties: map[string]string{"location": b.postingsLoc}},
		},
	}
}

// summary is the new snapshot's provenance.
func (b *builder) summary() map[string]string {
	s := map[string]string{
		"operation": b.op,
		"encoding":  b.opts.Encoding,
	}
	if b.table != nil {
		s["source-files"] = strconv.Itoa(len(b.table.Files()))
	} else if b.baseSnap != nil && b.baseSnap.Summary["source-files"] != "" {
		// A successor that reads no source (optimize) indexes the base's
		// source state, so it has the base's file count.
		s["source-files"] = b.baseSnap.Summary["source-files"]
	}
	for k, v := range b.detail {
		s[k] = v
	}
	return s
}

// commit writes the first metadata file and registers the index, or for a
// refresh publishes the successor snapshot.
func (b *builder) commit(ctx context.Context) error {
	p := b.opts.Progress
	p.Start(StageCommit, 0)
	snap := b.snapshot()
	if b.base != nil {
		return b.commitSuccessor(ctx, snap)
	}
	m, err := metadata.New(b.indexUUID.String(), snap, b.opts.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("build metadata: %w", err)
	}
	loc, err := catalog.CreateIndex(ctx, b.env.Catalog, b.env.Warehouse, b.opts.Name, m, snap.SourceTable)
	if err != nil {
		return fmt.Errorf("commit index %q: %w", b.opts.Name, err)
	}
	b.committed, b.committedLoc = m, loc
	return nil
}
