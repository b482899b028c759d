package indexer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/parqdb/parqdb/artifact"
	"github.com/parqdb/parqdb/buildplan"
	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
)

// StagePlan is the coordinator's last stage of a sharded build: it
// assigns source files to shards and writes the plan.
const StagePlan = "plan"

// Sentinels of sharded builds.
var (
	// ErrStalePlan reports a plan, or a shard's output, made for a source
	// state or catalog state that no longer holds: make a new plan.
	ErrStalePlan = errors.New("stale build plan")
	// ErrIncompletePlan reports a commit of a plan whose shards have not
	// all finished: run the missing shards, then commit again.
	ErrIncompletePlan = errors.New("build plan not complete")
)

// PlanResult describes a written plan.
type PlanResult struct {
	// Location is the plan's warehouse-relative location, the argument of
	// build-shard and commit.
	Location string
	Plan     *buildplan.Plan
	// Written counts the objects the coordinator wrote (centroid artifact
	// and plan) and their bytes.
	Files int
	Bytes int64
	// Stages are the coordinator's stage times.
	Stages   []StageTime
	Warnings []string
}

// Plan is the coordinator of a sharded create: it scans and checks the
// source as Create does, trains (or reuses) the centroids once, splits the
// source files into shards disjoint sets of about equal rows, and writes
// the plan under the new snapshot's build prefix. It commits nothing: run
// BuildShard for every shard, then CommitPlan.
func Plan(ctx context.Context, env Env, opts Options, shards int) (*PlanResult, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := checkShards(shards); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if _, err := env.Catalog.Load(ctx, opts.Name); err == nil {
		return nil, fmt.Errorf("index %q: %w (use `parqdb index refresh --shards` to update it, or drop it first)", opts.Name, catalog.ErrExists)
	} else if !errors.Is(err, catalog.ErrNotFound) {
		return nil, err
	}
	b := &builder{env: env, opts: opts, indexUUID: uuid.New(), op: "create"}
	b.setPostings(postings.PostingsLocation(b.indexUUID, 1, rand.Uint64()))
	defer b.close()
	pr, err := b.runPlan(ctx, []step{{StageScan, b.scanSource}, {StageTrain, b.train}}, buildplan.OpCreate, shards)
	if err != nil {
		b.cleanup()
		return nil, err
	}
	return pr, nil
}

func checkShards(n int) error {
	if n < 1 || n > buildplan.MaxShards {
		return fmt.Errorf("%w: shards (--shards): %d is out of range [1, %d]", ErrOptions, n, buildplan.MaxShards)
	}
	return nil
}

// planRefresh ends a refresh with --shards: it runs the preparing steps
// (scan and train, or the incremental checks) and writes a plan instead of
// assigning rows.
func (b *builder) planRefresh(ctx context.Context, prep []step, shards int) (*PlanResult, error) {
	if err := checkShards(shards); err != nil {
		return nil, err
	}
	op := buildplan.OpRefresh
	if b.op == "refresh-incremental" {
		op = buildplan.OpRefreshIncremental
	}
	return b.runPlan(ctx, prep, op, shards)
}

func (b *builder) runPlan(ctx context.Context, prep []step, op string, shards int) (*PlanResult, error) {
	var pr PlanResult
	steps := append(slices.Clone(prep), step{StagePlan, func(ctx context.Context) error {
		p, loc, err := b.writePlan(ctx, op, shards)
		pr.Plan, pr.Location = p, loc
		return err
	}})
	if _, err := b.runSteps(ctx, steps); err != nil {
		return nil, err
	}
	pr.Files, pr.Bytes, pr.Stages, pr.Warnings = len(b.written), b.bytes, b.stages, b.warnings
	return &pr, nil
}

// writePlan assigns the files to index to shards and writes the plan.
func (b *builder) writePlan(ctx context.Context, op string, shards int) (*buildplan.Plan, string, error) {
	b.opts.Progress.Start(StagePlan, 0)
	sf := sourceFilesOf(b.table)
	assign := sf.Files
	if b.scanTable != nil { // incremental: only the appended files
		assign = sourceFilesOf(b.scanTable).Files
	}
	p := &buildplan.Plan{
		FormatVersion:     buildplan.FormatVersion,
		Operation:         op,
		IndexName:         b.opts.Name,
		IndexUUID:         b.indexUUID.String(),
		SnapshotID:        1,
		PostingsLocation:  b.postingsLoc,
		CreatedAtMs:       b.opts.Now().UnixMilli(),
		Source:            *sf,
		SourceLoc:         b.srcLoc,
		VectorField:       b.opts.VectorField,
		KeyFields:         slices.Clone(b.opts.KeyFields),
		Metric:            b.opts.Metric,
		Encoding:          b.opts.Encoding,
		Dimension:         b.dim,
		NList:             b.nlist,
		Rows:              b.rows,
		CentroidsMetadata: b.art.Location,
		ReusedCentroids:   b.reused,
		SampleRows:        b.sampleRows,
		Summary:           b.detail,
		Shards:            buildplan.Assign(assign, shards),
	}
	if p.Summary == nil {
		p.Summary = map[string]string{}
	}
	if len(assign) < shards {
		b.warn(fmt.Sprintf("%d of the %d shards have no files: a shard's unit of work is one source file and only %d are to be indexed; split the source into more files",
			shards-len(assign), shards, len(assign)))
	}
	if b.base != nil {
		p.BaseSnapshotID = b.baseSnap.SnapshotID
		next, err := metadata.NextSnapshotID(b.base)
		if err != nil {
			return nil, "", err
		}
		p.SnapshotID = next
		if op == buildplan.OpRefreshIncremental {
			p.BaseManifest = postings.SnapshotLayout(b.baseSnap).Manifest()
		}
	}
	if err := p.Validate(); err != nil {
		return nil, "", fmt.Errorf("plan: %w", err)
	}
	data, err := p.Marshal()
	if err != nil {
		return nil, "", err
	}
	loc := buildplan.Location(b.postingsLoc)
	if err := b.writeObject(ctx, loc, data); err != nil {
		return nil, "", err
	}
	return p, loc, nil
}

// ReadPlan reads and validates the plan at loc.
func ReadPlan(ctx context.Context, wh storage.Bucket, loc string) (*buildplan.Plan, error) {
	if !buildplan.IsPlanKey(loc) {
		return nil, fmt.Errorf("%w: plan %q: not a plan location (indexes/<index uuid32>/<snapshot-id>-<write-id>/plan.json, as index create --shards printed it)", ErrOptions, loc)
	}
	data, err := storage.ReadAll(ctx, wh, loc)
	if err != nil {
		return nil, fmt.Errorf("read plan %s: %w", loc, err)
	}
	p, err := buildplan.Parse(loc, data)
	if err != nil {
		return nil, err
	}
	if buildplan.Location(p.PostingsLocation) != loc {
		return nil, fmt.Errorf("%s: %w: postings-location %q belongs to another plan", loc, buildplan.ErrInvalid, p.PostingsLocation)
	}
	return p, nil
}

// ShardOptions tune BuildShard. Zero values select the defaults of Options.
type ShardOptions struct {
	Workers  int
	TempDir  string
	Progress Progress
}

// ShardResult describes a finished shard.
type ShardResult struct {
	Shard int
	// Manifest is the shard manifest's location; Pieces the attempt's
	// folder ("" for a shard without rows).
	Manifest, Pieces string
	Rows             int64
	Files            int
	Bytes            int64
	Stages           []StageTime
}

// BuildShard builds shard i of the plan at planLoc: it reads only the
// shard's source files (refusing any that changed since the plan was
// made), assigns and encodes their rows with the plan's centroids, writes
// the postings pieces into a new attempt folder, then writes the shard
// manifest, which names that folder. It is idempotent: a rerun replaces the
// shard's output (its manifest then names the new attempt). A shard killed
// at any point, and every replaced attempt, leaves only files no manifest
// names, which gc removes once the plan is no longer in progress. A plan
// already committed (its postings manifest exists) is refused.
func BuildShard(ctx context.Context, env Env, planLoc string, i int, so ShardOptions) (*ShardResult, error) {
	p, err := ReadPlan(ctx, env.Warehouse, planLoc)
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= len(p.Shards) {
		return nil, fmt.Errorf("%w: shard (--shard): %d is out of range: plan %s has shards 0 … %d", ErrOptions, i, planLoc, len(p.Shards)-1)
	}
	opts := Options{Name: p.IndexName, VectorField: p.VectorField, KeyFields: p.KeyFields, Metric: p.Metric,
		Encoding: p.Encoding, Workers: so.Workers, TempDir: so.TempDir, Progress: so.Progress}.withDefaults()
	if _, err := env.Warehouse.Stat(ctx, postings.LayoutOf(p.PostingsLocation, postings.PostingsVersion).Manifest()); err == nil {
		return nil, fmt.Errorf("%w: plan %s was committed (or is being committed): its shards cannot change; make a new plan", ErrStalePlan, planLoc)
	} else if !errors.Is(err, storage.ErrNotExist) {
		return nil, err
	}
	attempt := fmt.Sprintf("%016x", rand.Uint64())
	res := &ShardResult{Shard: i, Manifest: buildplan.ShardManifestLocation(p.PostingsLocation, i)}
	sm := &buildplan.ShardManifest{FormatVersion: buildplan.FormatVersion, Plan: planLoc, Shard: i, Attempt: attempt, Files: []postings.SourceFile{}}
	b := &builder{env: env, opts: opts, nlist: p.NList, dim: p.Dimension}
	defer b.close()
	full, err := b.openShard(ctx, p, i, sm)
	if full != nil {
		defer full.Close()
	}
	if err == nil && sm.Rows > 0 {
		b.postingsLoc = buildplan.PiecesLocation(p.PostingsLocation, i, attempt)
		b.metaLoc = buildplan.PiecesMetaLocation(p.PostingsLocation, i, attempt)
		sm.Pieces = b.postingsLoc
		_, err = b.runSteps(ctx, []step{{StageAssign, b.assign}, {StageWrite, b.writePostings}})
	}
	if err == nil {
		var data []byte
		if data, err = sm.Marshal(); err == nil {
			err = b.writeObject(ctx, res.Manifest, data)
		}
	}
	if err != nil {
		b.cleanup()
		return nil, fmt.Errorf("shard %d of plan %s: %w", i, planLoc, err)
	}
	res.Pieces, res.Rows, res.Files, res.Bytes, res.Stages = sm.Pieces, sm.Rows, len(b.written), b.bytes, b.stages
	// Earlier attempts of this shard are unreachable now. They are left to
	// gc: deleting them here could race with a commit that has already read
	// the shard manifest naming one of them.
	return res, nil
}

// openShard opens the source, checks that the shard's files are as the
// plan recorded them, and prepares b to assign them. It returns the opened
// table, which the caller closes.
func (b *builder) openShard(ctx context.Context, p *buildplan.Plan, i int, sm *buildplan.ShardManifest) (*source.Table, error) {
	want := p.ShardFiles(i)
	if len(want) == 0 {
		return nil, nil
	}
	t, canon, err := source.OpenLocation(ctx, p.SourceLoc)
	if err != nil {
		return nil, err
	}
	if canon != p.SourceLoc {
		return t, fmt.Errorf("%w: source %s is now %s", ErrStalePlan, p.SourceLoc, canon)
	}
	have := map[string]source.File{}
	for _, f := range t.Files() {
		have[f.Key] = f
	}
	for _, w := range want {
		f, ok := have[w.Key]
		switch {
		case !ok:
			return t, fmt.Errorf("%w: source file %q of %s was removed after the plan was made; make a new plan", ErrStalePlan, w.Key, p.SourceLoc)
		case f.Size != w.Size || f.Version() != w.Version || f.Rows != w.Rows:
			return t, fmt.Errorf("%w: source file %q of %s was rewritten after the plan was made (size %d, version %s; the plan has %d, %s); make a new plan",
				ErrStalePlan, w.Key, p.SourceLoc, f.Size, f.Version(), w.Size, w.Version)
		}
		sm.Files = append(sm.Files, postings.SourceFile{Key: f.Key, Size: f.Size, Version: f.Version(), Rows: f.Rows})
		sm.Rows += f.Rows
	}
	set := map[string]bool{}
	for _, w := range want {
		set[w.Key] = true
	}
	view := t.Select(func(f source.File) bool { return set[f.Key] })
	l, err := view.Check(ctx, source.Binding{VectorField: p.VectorField, KeyFields: p.KeyFields, Metric: p.Metric, Dim: p.Dimension})
	if err != nil {
		return t, err
	}
	a, err := loadArtifact(ctx, b.env.Warehouse, p)
	if err != nil {
		return t, err
	}
	b.table, b.layout, b.rows, b.art, b.srcLoc = view, l, view.NumRows(), a, p.SourceLoc
	return t, nil
}

// loadArtifact loads the plan's centroid artifact and checks it matches
// the plan's descriptor.
func loadArtifact(ctx context.Context, wh storage.Bucket, p *buildplan.Plan) (*artifact.Artifact, error) {
	cm, err := artifact.ReadMeta(ctx, wh, p.CentroidsMetadata)
	if err != nil {
		return nil, err
	}
	d := cm.Descriptor
	if d.VectorField != p.VectorField || int(d.Dimension) != p.Dimension || d.Metric != p.Metric || int(d.NList) != p.NList {
		return nil, fmt.Errorf("%s: %w: descriptor %s/%d/%s/%d, the plan wants %s/%d/%s/%d", p.CentroidsMetadata, artifact.ErrMismatch,
			d.VectorField, d.Dimension, d.Metric, d.NList, p.VectorField, p.Dimension, p.Metric, p.NList)
	}
	c, err := artifact.LoadTables(ctx, wh, cm)
	if err != nil {
		return nil, err
	}
	return &artifact.Artifact{Location: p.CentroidsMetadata, Meta: cm, Centroids: c}, nil
}

// CommitOptions tune CommitPlan.
type CommitOptions struct {
	Progress Progress
	Now      func() time.Time
}

// CommitPlan publishes the index a plan's shards built: it checks that the
// catalog and the source are still as the plan found them and that every
// shard finished for this plan (ErrStalePlan, ErrIncompletePlan otherwise),
// merges the shards' postings manifests (and, for an incremental refresh,
// the base snapshot's) into one manifest of the root-bucketed layout,
// writes it with source-files.json into the plan's postings folder, and
// commits once by catalog compare-and-swap.
func CommitPlan(ctx context.Context, env Env, planLoc string, co CommitOptions) (*Result, error) {
	p, err := ReadPlan(ctx, env.Warehouse, planLoc)
	if err != nil {
		return nil, err
	}
	opts := Options{Name: p.IndexName, Source: p.SourceLoc, VectorField: p.VectorField, KeyFields: p.KeyFields, Metric: p.Metric,
		Encoding: p.Encoding, NList: p.NList, Progress: co.Progress, Now: co.Now}.withDefaults()
	idx, err := uuid.Parse(p.IndexUUID)
	if err != nil {
		return nil, err
	}
	op := map[string]string{buildplan.OpCreate: "create", buildplan.OpRefresh: "refresh", buildplan.OpRefreshIncremental: "refresh-incremental"}[p.Operation]
	b := &builder{env: env, opts: opts, indexUUID: idx, op: op,
		nlist: p.NList, dim: p.Dimension, reused: p.ReusedCentroids, sampleRows: p.SampleRows, detail: p.Summary}
	b.setPostings(p.PostingsLocation)
	defer b.close()
	res, err := b.runSteps(ctx, []step{
		{StageScan, func(ctx context.Context) error { return b.checkPlanState(ctx, p) }},
		{StageWrite, func(ctx context.Context) error { return b.mergeShards(ctx, p, planLoc) }},
		{StageCommit, b.commit},
	})
	if err != nil {
		// No cleanup: a concurrent commit of the same plan may have won
		// with the same manifest.json; an uncommitted one is gc's.
		return nil, err
	}
	b.removeStrayPieces(ctx)
	return res, nil
}

// removeStrayPieces deletes, after a successful commit, the postings files
// in the committed table location that its manifest does not list: the
// pieces of shard attempts that a later attempt replaced. It runs only in
// the writer that won the commit, whose manifest is the one stored (it is
// written once, mergeShards), so they are no snapshot's files; until they
// are gone, a reader that takes the table location as a table would count
// their rows twice (profile §4). Failures are left to gc, as are files an
// attempt still running writes after the listing.
func (b *builder) removeStrayPieces(ctx context.Context) {
	listed := map[string]bool{}
	for _, f := range b.manifest.Files {
		listed[f.Path] = true
	}
	for _, k := range b.pieceKeys {
		if !listed[k] {
			_ = b.env.Warehouse.Delete(ctx, k)
		}
	}
}

// checkPlanState checks that the catalog and the source are as the plan
// found them, and loads the centroids.
func (b *builder) checkPlanState(ctx context.Context, p *buildplan.Plan) error {
	b.opts.Progress.Start(StageScan, 0)
	entry, err := b.env.Catalog.Load(ctx, p.IndexName)
	switch {
	case p.Operation == buildplan.OpCreate && err == nil:
		if m, _, lerr := catalog.LoadMetadata(ctx, b.env.Catalog, b.env.Warehouse, p.IndexName); lerr == nil && m.IndexUUID == p.IndexUUID {
			return fmt.Errorf("%w: index %q was already committed from this plan (metadata %s)", ErrStalePlan, p.IndexName, entry.MetadataLocation)
		}
		return fmt.Errorf("%w: index %q was created by another writer after the plan was made: %w", ErrStalePlan, p.IndexName, catalog.ErrExists)
	case p.Operation == buildplan.OpCreate && !errors.Is(err, catalog.ErrNotFound):
		return err
	case p.Operation != buildplan.OpCreate:
		m, _, err := catalog.LoadMetadata(ctx, b.env.Catalog, b.env.Warehouse, p.IndexName)
		if err != nil {
			return err
		}
		cur := m.CurrentSnapshot()
		if m.IndexUUID != p.IndexUUID || cur.SnapshotID != p.BaseSnapshotID {
			return fmt.Errorf("%w: %w: index %q is at snapshot %d, the plan was made on snapshot %d; make a new plan (parqdb index refresh --shards)",
				ErrStalePlan, ErrConcurrent, p.IndexName, cur.SnapshotID, p.BaseSnapshotID)
		}
		b.base, b.baseSnap = m, cur
	}
	t, canon, err := source.OpenLocation(ctx, p.SourceLoc)
	if err != nil {
		return err
	}
	b.table, b.srcLoc = t, canon
	if canon != p.SourceLoc || t.Identity() != p.Source.TableIdentity {
		c := diffSources(&p.Source, t)
		return fmt.Errorf("%w: source %s changed since the plan was made (added %q, removed %q, rewritten %q); make a new plan",
			ErrStalePlan, p.SourceLoc, c.added, c.removed, c.rewritten)
	}
	l, err := t.Check(ctx, source.Binding{VectorField: p.VectorField, KeyFields: p.KeyFields, Metric: p.Metric, Dim: p.Dimension})
	if err != nil {
		return err
	}
	b.layout, b.rows = l, t.NumRows()
	if b.rows != p.Rows {
		return fmt.Errorf("%w: source %s has %d rows, the plan %d", ErrStalePlan, p.SourceLoc, b.rows, p.Rows)
	}
	a, err := loadArtifact(ctx, b.env.Warehouse, p)
	if err != nil {
		return err
	}
	b.art = a
	return nil
}

// mergeShards reads every shard manifest and its postings pieces and
// writes the merged manifest and source-files.json.
func (b *builder) mergeShards(ctx context.Context, p *buildplan.Plan, planLoc string) error {
	b.opts.Progress.Start(StageWrite, int64(len(p.Shards)))
	wh := b.env.Warehouse
	done, err := wh.List(ctx, buildplan.Prefix(p.PostingsLocation)+buildplan.ShardsFolder)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, in := range done {
		have[in.Key] = true
	}
	var missing []string
	for i := range p.Shards {
		if !have[buildplan.ShardManifestLocation(p.PostingsLocation, i)] {
			missing = append(missing, strconv.Itoa(i))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: plan %s: shard(s) %s of %d have not finished; run `parqdb index build-shard %s --shard N` for each, then commit again",
			ErrIncompletePlan, planLoc, strings.Join(missing, ", "), len(p.Shards), planLoc)
	}
	pieces, err := wh.List(ctx, p.PostingsLocation)
	if err != nil {
		return err
	}
	sizes := map[string]int64{}
	for _, in := range pieces {
		sizes[in.Key] = in.Size
		b.pieceKeys = append(b.pieceKeys, in.Key)
	}
	schema, err := b.postingsSchema()
	if err != nil {
		return err
	}
	var files []postings.FileEntry
	if p.BaseManifest != "" {
		m, err := readManifest(ctx, wh, p.BaseManifest)
		if err != nil {
			return fmt.Errorf("read base postings manifest: %w", err)
		}
		files = manifestFiles(m)
	}
	for i := range p.Shards {
		loc := buildplan.ShardManifestLocation(p.PostingsLocation, i)
		data, err := storage.ReadAll(ctx, wh, loc)
		if err != nil {
			return fmt.Errorf("read shard manifest %s: %w", loc, err)
		}
		sm, err := buildplan.ParseShardManifest(loc, data, p, planLoc, i)
		if err != nil {
			return err
		}
		want := p.ShardFiles(i)
		if !slices.Equal(sm.Files, want) && !(len(want) == 0 && len(sm.Files) == 0) {
			return fmt.Errorf("%w: %s: shard %d read other source files than the plan assigns it (a shard of an older source state?); rerun `parqdb index build-shard %s --shard %d`",
				ErrStalePlan, loc, i, planLoc, i)
		}
		if sm.Rows != p.Shards[i].Rows {
			return fmt.Errorf("%w: %s: %d rows, the plan assigns shard %d %d rows", ErrStalePlan, loc, sm.Rows, i, p.Shards[i].Rows)
		}
		if sm.Pieces == "" {
			b.opts.Progress.Add(1)
			continue
		}
		m, err := readManifest(ctx, wh, buildplan.PiecesMetaLocation(p.PostingsLocation, i, sm.Attempt)+postings.ManifestName)
		if err != nil {
			return fmt.Errorf("shard %d: %w; rerun `parqdb index build-shard %s --shard %d`", i, err, planLoc, i)
		}
		if err := m.CheckSchema(schema); err != nil || m.NList != int32(p.NList) || m.Rows != sm.Rows {
			return fmt.Errorf("%w: shard %d postings %s do not match the plan (schema: %v, nlist %d, rows %d)", ErrStalePlan, i, sm.Pieces, err, m.NList, m.Rows)
		}
		for _, f := range m.Files {
			if !strings.HasPrefix(f.Path, sm.Pieces) {
				return fmt.Errorf("%w: shard %d manifest lists %s, not one of its files %s…", buildplan.ErrInvalid, i, f.Path, sm.Pieces)
			}
			if sz, ok := sizes[f.Path]; !ok || sz != f.Size {
				return fmt.Errorf("%w: shard %d postings file %s is missing or has another size; rerun `parqdb index build-shard %s --shard %d`",
					ErrIncompletePlan, i, f.Path, planLoc, i)
			}
		}
		files = append(files, manifestFiles(m)...)
		b.opts.Progress.Add(1)
	}
	m, err := postings.NewManifest(schema, int32(p.NList), files)
	if err != nil {
		return fmt.Errorf("postings manifest: %w", err)
	}
	if m.Rows != p.Rows {
		return fmt.Errorf("%w: the shards and base hold %d rows, the source %d", ErrStalePlan, m.Rows, p.Rows)
	}
	sf, err := sourceFilesOf(b.table).Marshal()
	if err != nil {
		return err
	}
	if err := b.writeObject(ctx, b.metaLoc+postings.SourceFilesName, sf); err != nil {
		return err
	}
	data, err := m.Marshal()
	if err != nil {
		return err
	}
	// Written once: a concurrent commit of this plan that read other shard
	// attempts (a shard ran again while it ran) cannot replace the manifest
	// the winner committed, so the winner may delete the attempts it does
	// not list (removeStrayPieces).
	mkey := b.metaLoc + postings.ManifestName
	if err := wh.PutIfAbsent(ctx, mkey, data); errors.Is(err, storage.ErrExist) {
		have, err := storage.ReadAll(ctx, wh, mkey)
		if err != nil {
			return fmt.Errorf("read %s: %w", mkey, err)
		}
		if !bytes.Equal(have, data) {
			return fmt.Errorf("%w: %s was written by another commit of plan %s from other shard attempts (a shard ran again during a commit); make a new plan",
				ErrStalePlan, mkey, planLoc)
		}
	} else if err != nil {
		return err
	}
	b.bytes += int64(len(data))
	b.manifest = m
	return nil
}

func readManifest(ctx context.Context, wh storage.Bucket, key string) (*postings.Manifest, error) {
	data, err := storage.ReadAll(ctx, wh, key)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	m, err := postings.ParseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return m, nil
}
