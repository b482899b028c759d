package indexer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/google/uuid"

	"github.com/parqdb/parqdb/artifact"
	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
)

// OptimizeResult reports what Optimize did.
type OptimizeResult struct {
	// Done is false when the layout was already compact (nothing committed).
	Done bool
	// FilesBefore and RowGroupsBefore describe the base postings; the
	// committed layout is in Build.
	FilesBefore, RowGroupsBefore int
	Build                        *Result
}

// OptimizeOptions tune Optimize.
type OptimizeOptions struct {
	Workers  int
	Progress Progress
	// Force rewrites even a compact layout.
	Force bool
}

// Optimize rewrites the postings of index name's current snapshot into the
// compact layout — per root bucket one file (more only past the row-group
// limit), one row group per CID up to the row-group size — and publishes it
// as a successor snapshot with the same source binding and centroids. An
// index whose CIDs span several files after incremental refreshes reads
// fewer, larger ranges afterwards. It reads no source data.
func Optimize(ctx context.Context, env Env, name string, oo OptimizeOptions) (*OptimizeResult, error) {
	m, _, err := catalog.LoadMetadata(ctx, env.Catalog, env.Warehouse, name)
	if err != nil {
		return nil, err
	}
	snap := m.CurrentSnapshot()
	params, err := snap.IVF()
	if err != nil {
		return nil, err
	}
	lay := postings.SnapshotLayout(snap)
	data, err := storage.ReadAll(ctx, env.Warehouse, lay.Manifest())
	if err != nil {
		return nil, fmt.Errorf("read postings manifest: %w", err)
	}
	man, err := postings.ParseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", lay.Manifest(), err)
	}
	a, err := artifact.LoadForSnapshot(ctx, env.Warehouse, snap)
	if err != nil {
		return nil, err
	}
	res := &OptimizeResult{FilesBefore: len(man.Files), RowGroupsBefore: len(man.RowGroups)}
	if !oo.Force && compact(man, a.Centroids.NumRoots()) {
		return res, nil
	}
	sf, err := storage.ReadAll(ctx, env.Warehouse, lay.SourceFiles())
	if err != nil {
		return nil, fmt.Errorf("read source file list: %w", err)
	}
	next, err := metadata.NextSnapshotID(m)
	if err != nil {
		return nil, err
	}
	idx, err := uuid.Parse(m.IndexUUID)
	if err != nil {
		return nil, err
	}
	schema := man.Schema()
	for i := range schema.Keys {
		schema.Keys[i].Name = snap.SourceKeyFields[i]
	}
	src := snap.SourceTable
	opts := Options{
		Name: name, VectorField: snap.VectorField, KeyFields: slices.Clone(snap.SourceKeyFields),
		Metric: snap.Metric, NList: int(params.NList), Encoding: params.PostingEncoding,
		Workers: oo.Workers, Progress: oo.Progress,
	}.withDefaults()
	b := &builder{
		env: env, opts: opts, indexUUID: idx, op: "optimize",
		base: m, baseSnap: snap, art: a, reused: true, nlist: int(params.NList),
		rows: snap.IndexedRows, dim: int(params.Dimension), schema: schema,
		srcLoc: src.Properties["location"], keepSource: &src, keepSourceFiles: sf,
		detail: map[string]string{
			"files-before":      strconv.Itoa(len(man.Files)),
			"row-groups-before": strconv.Itoa(len(man.RowGroups)),
		},
	}
	b.setPostings(postings.PostingsLocation(idx, next, rand.Uint64()))
	defer b.close()
	rd := &postingsReader{wh: env.Warehouse, man: man, schema: schema, c: a.Centroids.CIDOffsets}
	b.readBucket = rd.bucket
	steps := []step{{StageWrite, b.writePostings}}
	// Optimize keeps every list's rows in order, so the successor's vectors
	// file is the base's data under a footer bound to the new manifest.
	if b.baseVec, err = openBaseVectors(ctx, env.Warehouse, lay.Meta, data, man); err != nil {
		return nil, fmt.Errorf("index %q: %w", name, err)
	}
	if b.baseVec != nil {
		b.opts.VectorsFile = true
		steps = append(steps, step{StageVectors, b.writeVectors})
	}
	r, err := b.runSteps(ctx, append(steps, step{StageCommit, b.commit}))
	if err != nil {
		b.cleanup()
		return nil, err
	}
	res.Done, res.Build = true, r
	return res, nil
}

// compact reports whether every root bucket has at most one file and every
// CID one row group (or consecutive row groups of one file).
func compact(man *postings.Manifest, roots int) bool {
	perBucket := map[int32]int{}
	for _, f := range man.Files {
		perBucket[f.Bucket]++
		if perBucket[f.Bucket] > 1 {
			return false
		}
	}
	return len(man.Files) <= roots
}

// postingsReader reads the rows of one root bucket from a manifest's files.
// It is safe for concurrent use: every call opens what it reads.
type postingsReader struct {
	wh     storage.Bucket
	man    *postings.Manifest
	schema postings.Schema
	c      []int32 // root CID offsets
}

// bucket returns root bucket r's rows in CID order (within a CID, in
// manifest order).
func (p *postingsReader) bucket(ctx context.Context, r int) ([]postings.Row, error) {
	var batch postings.Batch
	for cid := p.c[r]; cid < p.c[r+1]; cid++ {
		for _, rg := range p.man.Ranges(cid) {
			path := p.man.Files[rg.File].Path
			o, err := p.wh.Open(ctx, path)
			if err != nil {
				return nil, err
			}
			buf := make([]byte, rg.Length)
			_, err = o.ReadAt(buf, rg.Offset)
			o.Close()
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", path, err)
			}
			if err := postings.DecodeRowGroup(p.schema, buf, rg, &batch); err != nil {
				return nil, fmt.Errorf("%s row group %d: %w", path, rg.RowGroup, err)
			}
		}
	}
	rows := make([]postings.Row, batch.Len())
	for i := range rows {
		rows[i] = batch.Row(i)
	}
	return rows, nil
}
