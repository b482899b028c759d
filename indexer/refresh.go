package indexer

import (
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
	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/vecfile"
)

// DefaultMaxGrowth is the drift threshold of an incremental refresh: when
// the appended rows exceed this fraction of the rows already indexed, the
// centroids no longer describe the data well enough and refresh retrains.
const DefaultMaxGrowth = 0.2

// ErrConcurrent reports that another writer published a snapshot while a
// refresh was building on the previous one; running refresh again builds
// on the new snapshot.
var ErrConcurrent = errors.New("index changed during refresh")

// Refresh actions.
const (
	ActionNone        = "none"        // the source is unchanged: nothing committed
	ActionIncremental = "incremental" // appended files indexed with the current centroids
	ActionRebuild     = "rebuild"     // full rebuild with newly trained centroids
)

// RefreshOptions tune Refresh. Zero values select the defaults.
type RefreshOptions struct {
	// Retrain forces a full rebuild with newly trained centroids.
	Retrain bool
	// DryRun decides and reports what refresh would do, and commits nothing.
	DryRun bool
	// MaxGrowth is the drift threshold (default DefaultMaxGrowth).
	MaxGrowth float64
	// Seed, SampleRows, Iterations, Workers, TempDir, Progress and Now are
	// as in Options.
	Seed       uint64
	SampleRows int
	Iterations int
	Workers    int
	TempDir    string
	Progress   Progress
	Now        func() time.Time
	// Shards, when positive, makes refresh write a plan of that many
	// shards instead of building (see Plan); RefreshResult.Plan names it.
	Shards int
}

// RefreshResult reports what Refresh decided and did.
type RefreshResult struct {
	Action string
	Reason string
	// The source change against the current snapshot.
	AddedFiles, RemovedFiles, RewrittenFiles []string
	AddedRows                                int64
	// Build describes the committed snapshot; nil for ActionNone, dry runs
	// and plans.
	Build *Result
	// Plan describes the plan written with RefreshOptions.Shards.
	Plan *PlanResult
}

// Refresh publishes a successor snapshot of index name bound to the
// current exact state of its source: nothing when the source is unchanged,
// an incremental update (only the appended files are read, assigned to the
// existing centroids and written as new postings files that the manifest
// adds to the kept ones) when files were only added and the growth stays
// under the drift threshold, else a full rebuild with retrained centroids.
func Refresh(ctx context.Context, env Env, name string, ro RefreshOptions) (*RefreshResult, error) {
	if ro.MaxGrowth == 0 {
		ro.MaxGrowth = DefaultMaxGrowth
	}
	if ro.MaxGrowth < 0 {
		return nil, fmt.Errorf("%w: max growth %v is negative", ErrOptions, ro.MaxGrowth)
	}
	m, _, err := catalog.LoadMetadata(ctx, env.Catalog, env.Warehouse, name)
	if err != nil {
		return nil, err
	}
	snap := m.CurrentSnapshot()
	params, err := snap.IVF()
	if err != nil {
		return nil, err
	}
	srcLoc := snap.SourceTable.Properties["location"]
	t, canon, err := source.OpenAny(ctx, srcLoc)
	if err != nil {
		return nil, fmt.Errorf("index %q: %w", name, err)
	}
	keep := false
	defer func() {
		if !keep {
			t.Close()
		}
	}()
	res := &RefreshResult{}
	lay := postings.SnapshotLayout(snap)
	old, oldErr := ReadSourceFiles(ctx, env.Warehouse, lay)
	if oldErr != nil && !errors.Is(oldErr, storage.ErrNotExist) && !ro.Retrain {
		// A failed read is not a reason to retrain: report it, so that a
		// retry can do the cheap refresh.
		return nil, fmt.Errorf("index %q: %w", name, oldErr)
	}
	if oldErr == nil {
		c := diffSources(old, t)
		res.AddedFiles, res.RemovedFiles, res.RewrittenFiles, res.AddedRows = c.added, c.removed, c.rewritten, c.addedRows
	}
	unchanged := t.Identity() == snap.SourceTable.Properties["table-identity"]
	switch {
	case ro.Retrain:
		res.Action, res.Reason = ActionRebuild, "retraining was requested"
	case unchanged:
		res.Action, res.Reason = ActionNone, fmt.Sprintf("source %s is unchanged since snapshot %d", srcLoc, snap.SnapshotID)
	case oldErr != nil:
		res.Action, res.Reason = ActionRebuild, fmt.Sprintf("the snapshot's source file list cannot be read (%v)", oldErr)
	case len(res.RemovedFiles)+len(res.RewrittenFiles) > 0:
		res.Action, res.Reason = ActionRebuild, fmt.Sprintf("files were removed (%d) or rewritten (%d)", len(res.RemovedFiles), len(res.RewrittenFiles))
	case float64(res.AddedRows) > ro.MaxGrowth*float64(snap.IndexedRows):
		res.Action, res.Reason = ActionRebuild, fmt.Sprintf("%d appended rows are more than %.0f%% of the %d indexed (drift threshold)",
			res.AddedRows, 100*ro.MaxGrowth, snap.IndexedRows)
	default:
		res.Action, res.Reason = ActionIncremental, fmt.Sprintf("%d file(s) with %d rows appended", len(res.AddedFiles), res.AddedRows)
	}
	if !ro.Retrain && oldErr == nil && (res.Action == ActionRebuild && len(res.RemovedFiles)+len(res.RewrittenFiles) > 0 ||
		res.Action == ActionIncremental && len(res.AddedFiles) == 0) {
		ok, reason, err := icebergReassign(ctx, t, snap, int64(params.NList), ro.MaxGrowth)
		if err != nil {
			return nil, fmt.Errorf("index %q: %w", name, err)
		}
		if ok {
			res.Action, res.Reason = ActionReassign, reason
		}
	}
	if res.Action == ActionNone || ro.DryRun {
		return res, nil
	}

	nlist := int(params.NList)
	if res.Action == ActionRebuild && int64(nlist) > t.NumRows() {
		nlist = DefaultNList(t.NumRows())
	}
	opts := Options{
		Name: name, Source: canon, VectorField: snap.VectorField, KeyFields: slices.Clone(snap.SourceKeyFields),
		Metric: snap.Metric, NList: nlist, Encoding: params.PostingEncoding,
		Seed: ro.Seed, SampleRows: ro.SampleRows, Iterations: ro.Iterations, Workers: ro.Workers,
		TempDir: ro.TempDir, Progress: ro.Progress, Now: ro.Now, ReuseCentroids: ReuseAuto,
	}.withDefaults()
	// A successor of a snapshot with a vectors file gets one too (profile
	// §4.2), written in this process; a plan's shards write none.
	if ro.Shards == 0 {
		_, err := env.Warehouse.Stat(ctx, vecfile.Location(lay.Meta))
		switch {
		case err == nil:
			opts.VectorsFile = true
		case !errors.Is(err, storage.ErrNotExist):
			return nil, fmt.Errorf("index %q: %w", name, err)
		}
	}
	if ro.Retrain {
		// Reuse would find this index's own artifact when the source is
		// unchanged: retraining means new centroids.
		opts.ReuseCentroids = ReuseNever
	}
	next, err := metadata.NextSnapshotID(m)
	if err != nil {
		return nil, err
	}
	idx, err := uuid.Parse(m.IndexUUID)
	if err != nil {
		return nil, err
	}
	keep = true
	b := &builder{
		env: env, opts: opts, indexUUID: idx, op: "refresh",
		base: m, baseSnap: snap, table: t, srcLoc: canon,
		detail: map[string]string{
			"refresh":       res.Action,
			"added-files":   strconv.Itoa(len(res.AddedFiles)),
			"added-rows":    strconv.FormatInt(res.AddedRows, 10),
			"refresh-cause": res.Reason,
		},
	}
	b.setPostings(postings.PostingsLocation(idx, next, rand.Uint64()))
	defer b.close()
	var steps []step
	if res.Action == ActionIncremental {
		b.op = "refresh-incremental"
		steps = []step{
			{StageScan, func(ctx context.Context) error { return b.prepareIncremental(ctx, res.AddedFiles) }},
			{StageAssign, b.assign},
			{StageWrite, b.writePostings},
			{StageCommit, b.commit},
		}
	} else if res.Action == ActionReassign {
		b.op = "refresh-reassign"
		steps = []step{
			{StageScan, b.scanSource},
			{StageTrain, b.keepCentroids},
			{StageAssign, b.assign},
			{StageWrite, b.writePostings},
			{StageCommit, b.commit},
		}
	} else {
		steps = []step{
			{StageScan, b.scanSource},
			{StageTrain, b.train},
			{StageAssign, b.assign},
			{StageWrite, b.writePostings},
			{StageCommit, b.commit},
		}
	}
	if opts.VectorsFile {
		steps = slices.Insert(steps, len(steps)-1, step{StageVectors, b.writeVectors})
	}
	if ro.Shards > 0 { // a plan: the preparing steps, not assign, write, commit
		pr, err := b.planRefresh(ctx, steps[:len(steps)-3], ro.Shards)
		if err != nil {
			b.cleanup()
			return nil, err
		}
		res.Plan = pr
		return res, nil
	}
	r, err := b.runSteps(ctx, steps)
	if err != nil {
		b.cleanup()
		return nil, err
	}
	res.Build = r
	return res, nil
}

// prepareIncremental checks the current source against the binding, loads
// the base snapshot's centroids and postings manifest, narrows the scan to
// the appended files and checks that their keys are new.
func (b *builder) prepareIncremental(ctx context.Context, added []string) error {
	t := b.table
	l, err := t.Check(ctx, source.Binding{VectorField: b.opts.VectorField, KeyFields: b.opts.KeyFields, Metric: b.opts.Metric, Dim: b.dimOfBase()})
	if err != nil {
		return err
	}
	b.layout, b.dim, b.rows = l, l.Dim, t.NumRows()
	a, err := artifact.LoadForSnapshot(ctx, b.env.Warehouse, b.baseSnap)
	if err != nil {
		return err
	}
	b.art, b.reused = a, true
	b.nlist = a.Centroids.NList
	lay := postings.SnapshotLayout(b.baseSnap)
	data, err := storage.ReadAll(ctx, b.env.Warehouse, lay.Manifest())
	if err != nil {
		return fmt.Errorf("read base postings manifest: %w", err)
	}
	man, err := postings.ParseManifest(data)
	if err != nil {
		return fmt.Errorf("%s: %w", lay.Manifest(), err)
	}
	b.baseFiles = manifestFiles(man)
	if b.opts.VectorsFile {
		// The successor's lists keep the base's rows: their exact vectors
		// come from the base's file, the appended ones from the spill.
		if b.baseVec, err = openBaseVectors(ctx, b.env.Warehouse, lay.Meta, data, man); err != nil {
			return err
		}
		if b.baseVec == nil {
			return fmt.Errorf("base snapshot's vectors file %s: %w (it was there when the refresh began)", vecfile.Location(lay.Meta), storage.ErrNotExist)
		}
	}
	set := map[string]bool{}
	for _, k := range added {
		set[k] = true
	}
	b.scanTable = t.Select(func(f source.File) bool { return set[f.Key] })
	if b.scanTable == nil {
		return fmt.Errorf("incremental refresh: none of the added files %s is in the source", strings.Join(added, ", "))
	}
	b.scanLayout, err = b.scanTable.Check(ctx, source.Binding{VectorField: b.opts.VectorField, KeyFields: b.opts.KeyFields, Metric: b.opts.Metric, Dim: l.Dim})
	if err != nil {
		return err
	}
	// The appended keys must be unique among themselves and against the
	// rows the index already holds (the unchanged files): this reads the
	// key columns of every file, not the vectors.
	return source.CheckUniqueKeys(ctx, t, l, func(f source.File) bool { return !set[f.Key] }, nil)
}

func (b *builder) dimOfBase() int {
	n, _ := strconv.Atoi(b.baseSnap.Parameters[metadata.ParamDimension])
	return n
}

// manifestFiles rebuilds the file entries of a parsed manifest, with their
// ranges, so that a new manifest can keep them.
func manifestFiles(m *postings.Manifest) []postings.FileEntry {
	files := slices.Clone(m.Files)
	for i := range files {
		files[i].Ranges = nil
	}
	for _, r := range m.RowGroups {
		r2 := r
		r2.File = 0
		files[r.File].Ranges = append(files[r.File].Ranges, r2)
	}
	for i := range files {
		slices.SortFunc(files[i].Ranges, func(a, b postings.Range) int { return int(a.RowGroup - b.RowGroup) })
	}
	return files
}

// commitSuccessor publishes snap as the successor of the base snapshot by
// catalog compare-and-swap. If another snapshot became current meanwhile,
// the work was done on a stale base and it fails with ErrConcurrent.
func (b *builder) commitSuccessor(ctx context.Context, snap metadata.Snapshot) error {
	baseID := b.baseSnap.SnapshotID
	now := b.opts.Now().UnixMilli()
	m, loc, err := catalog.Update(ctx, b.env.Catalog, b.env.Warehouse, b.opts.Name,
		func(base *metadata.Metadata, e catalog.Entry) (*metadata.Metadata, *catalog.Entry, error) {
			if cur := base.CurrentSnapshot(); cur.SnapshotID != baseID {
				return nil, nil, fmt.Errorf("%w: snapshot %d became current while this refresh built on snapshot %d; run refresh again",
					ErrConcurrent, cur.SnapshotID, baseID)
			}
			next, err := metadata.Successor(base, snap, now)
			if err != nil {
				return nil, nil, err
			}
			e.Source = snap.SourceTable
			return next, &e, nil
		})
	if err != nil {
		return fmt.Errorf("commit index %q: %w", b.opts.Name, err)
	}
	b.committed, b.committedLoc = m, loc
	return nil
}
