package knnjoin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/parqdb/parqdb/buildplan"
	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

// Options describe a join: the index, the query table and its columns,
// the search options, the neighbour filters and the output.
type Options struct {
	// Index is the index name; SnapshotID a retained snapshot (0: the
	// current one, which the plan pins).
	Index      string
	SnapshotID int64
	// Queries is the query table: a Parquet file or folder (local or
	// s3://) or an iceberg:// table reference, opened as index create
	// opens a source.
	Queries string
	// QueryKey names the query table's key columns, written to the
	// output as query_<name>; QueryVector its vector column.
	QueryKey    []string
	QueryVector string
	// K, NProbe, Refine, Recall and Where are search's -k, --nprobe,
	// --refine, --recall and --where (Where filters the neighbours).
	K, NProbe, Refine int
	Recall            float64
	Where             string
	// Self drops each query's own row (same key) from its neighbours:
	// the search asks for K+1 and keeps K. The query key must then have
	// the index key's types.
	Self bool
	// MaxDistance drops neighbours with a larger _distance;
	// MinSimilarity (cosine only) those with a smaller 1 − _distance.
	// At most one is set.
	MaxDistance   *float64
	MinSimilarity *float64
	// Output is the output folder (local or s3://bucket/prefix).
	Output string
}

// Progress receives a join's progress; the CLI's reporter implements it.
// Its methods are called from one goroutine at a time.
type Progress interface {
	Start(stage string, total int64)
	Add(n int64)
	End(stage string, d time.Duration)
	Warn(msg string)
}

// Stages reported to Progress: StageJoin counts query rows, StagePublish
// part files.
const (
	StageJoin    = "join"
	StagePublish = "publish"
)

type nopProgress struct{}

func (nopProgress) Start(string, int64)       {}
func (nopProgress) Add(int64)                 {}
func (nopProgress) End(string, time.Duration) {}
func (nopProgress) Warn(string)               {}

// RunOptions tune how a shard runs; they never change the output.
type RunOptions struct {
	// Workers is the goroutines SearchBatch uses (0: one per core).
	Workers int
	// BatchQueries is the queries searched per SearchBatch call; 0 sizes
	// it from the process memory budget (batchQueries).
	BatchQueries int
	Progress     Progress
}

// PlanResult is a written plan.
type PlanResult struct {
	Plan     *Plan
	Location string
}

// ShardResult describes a finished shard.
type ShardResult struct {
	Shard    int
	Queries  int64
	Rows     int64
	Parts    int
	Bytes    int64
	Manifest string
	Duration time.Duration
}

// CommitResult describes a committed output.
type CommitResult struct {
	Output  string
	Success *Success
	Bytes   int64
}

// resolved is a checked join: the plan and what opening the index and
// the query table found.
type resolved struct {
	plan  *Plan
	ix    *query.Index
	out   storage.Bucket
	qkeys []source.KeyType // query key types (from the plan's check)
	made  bool             // plan made the local output folder
}

// MakePlan checks o against the index and the query table, splits the
// query table's files into shards (buildplan.Assign: whole files, about
// equal rows) and writes the plan at PlanLocation(output). It refuses an
// output that already holds a published join, other visible files or
// another plan (ErrOutputExists).
func MakePlan(ctx context.Context, env query.Env, o Options, shards int) (*PlanResult, error) {
	r, err := plan(ctx, env, o, shards, false)
	if err != nil {
		return nil, err
	}
	defer r.ix.Close()
	return &PlanResult{Plan: r.plan, Location: PlanLocation(r.plan.Output)}, nil
}

// Join runs a whole join in this process: a plan of one shard, the shard,
// the commit. A plan of one shard left by a killed Join at the same output
// is replaced; on failure or cancellation nothing is left visible (and a
// local output folder Join made is removed).
func Join(ctx context.Context, env query.Env, o Options, ro RunOptions) (*CommitResult, *ShardResult, error) {
	r, err := plan(ctx, env, o, 1, true)
	if err != nil {
		return nil, nil, err
	}
	defer r.ix.Close()
	sr, err := runShard(ctx, r, 0, ro)
	if err == nil {
		var cr *CommitResult
		if cr, err = commit(ctx, r.out, r.plan, ro.Progress); err == nil {
			return cr, sr, nil
		}
	}
	removePrefix(context.WithoutCancel(ctx), r.out, WorkPrefix)
	if r.made {
		_ = os.Remove(r.plan.Output) // only if empty
	}
	return nil, nil, err
}

func plan(ctx context.Context, env query.Env, o Options, shards int, replace bool) (*resolved, error) {
	if err := checkOptions(o, shards); err != nil {
		return nil, err
	}
	out, err := OutputLocation(o.Output)
	if err != nil {
		return nil, err
	}
	ix, err := query.Open(ctx, env, o.Index, query.OpenOptions{SnapshotID: o.SnapshotID})
	if err != nil {
		return nil, err
	}
	r := &resolved{ix: ix}
	p := &Plan{FormatVersion: FormatVersion, ID: fmt.Sprintf("%016x", rand.Uint64()), CreatedAtMs: time.Now().UnixMilli(),
		Index: o.Index, IndexUUID: ix.IndexUUID().String(), SnapshotID: ix.Snapshot().SnapshotID,
		QueryKey: o.QueryKey, QueryVector: o.QueryVector, K: o.K, NProbe: o.NProbe, Refine: o.Refine, Recall: o.Recall,
		Where: o.Where, Self: o.Self, MaxDistance: o.MaxDistance, Output: out}
	if err := r.checkIndex(ctx, o, p); err != nil {
		ix.Close()
		return nil, err
	}
	t, canon, err := source.OpenAny(ctx, o.Queries)
	if err != nil {
		ix.Close()
		return nil, err
	}
	defer t.Close()
	l, err := t.Check(ctx, queryBinding(p, ix))
	if err != nil {
		ix.Close()
		return nil, fmt.Errorf("query table: %w", err)
	}
	r.qkeys = l.Keys
	if err := r.checkKeys(p); err != nil {
		ix.Close()
		return nil, err
	}
	p.Queries, p.QueriesIdentity = canon, t.Identity()
	for _, f := range t.Files() {
		p.Files = append(p.Files, postings.SourceFile{Key: f.Key, Size: f.Size, Version: f.Version(), Rows: f.Rows})
	}
	slices.SortFunc(p.Files, func(a, b postings.SourceFile) int { return strings.Compare(a.Key, b.Key) })
	p.Shards = buildplan.Assign(p.Files, shards)
	if err := p.Validate(); err != nil {
		ix.Close()
		return nil, err
	}
	if !strings.HasPrefix(out, "s3://") {
		// storage.Open makes a missing local folder: remember to remove it
		// again if the join fails.
		_, serr := os.Stat(out)
		r.made = errors.Is(serr, os.ErrNotExist)
	}
	if r.out, err = storage.Open(ctx, out); err != nil {
		ix.Close()
		return nil, fmt.Errorf("output %s: %w", out, err)
	}
	if err := checkOutput(ctx, r.out, out, replace); err != nil {
		ix.Close()
		return nil, err
	}
	data, err := marshal(p)
	if err == nil {
		err = r.out.PutIfAbsent(ctx, PlanKey, data)
	}
	if err != nil {
		ix.Close()
		if errors.Is(err, storage.ErrExist) {
			return nil, fmt.Errorf("%w: %s: another join planned this output meanwhile", ErrOutputExists, PlanLocation(out))
		}
		return nil, fmt.Errorf("write %s: %w", PlanLocation(out), err)
	}
	r.plan = p
	return r, nil
}

// checkOptions checks what needs neither the index nor the table.
func checkOptions(o Options, shards int) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrOptions, fmt.Sprintf(format, args...))
	}
	k := o.K
	if o.Self {
		k++
	}
	switch {
	case o.Index == "":
		return bad("index: empty")
	case o.Queries == "":
		return bad("queries (--queries-table): empty")
	case len(o.QueryKey) == 0:
		return bad("query key (--query-key): give the query table's key column(s)")
	case o.QueryVector == "":
		return bad("query vector (--query-vector): give the query table's vector column")
	case o.K < query.MinK || k > query.MaxK:
		return bad("k = %d is outside [%d, %d] (%d with --self, which searches k+1)", o.K, query.MinK, query.MaxK, query.MaxK-1)
	case o.Recall != 0 && (o.NProbe != 0 || o.Refine != 0):
		return bad("recall chooses nprobe and refine: give recall or nprobe/refine, not both")
	case o.Recall < 0 || o.Recall > 1:
		return bad("recall = %g is outside (0, 1]", o.Recall)
	case o.MaxDistance != nil && o.MinSimilarity != nil:
		return bad("give max distance (--max-distance) or min similarity (--min-similarity), not both")
	case o.MaxDistance != nil && (math.IsNaN(*o.MaxDistance) || *o.MaxDistance < 0):
		return bad("max distance (--max-distance) = %g: want a distance ≥ 0", *o.MaxDistance)
	case o.MinSimilarity != nil && !(*o.MinSimilarity >= -1 && *o.MinSimilarity <= 1):
		return bad("min similarity (--min-similarity) = %g is outside [-1, 1]", *o.MinSimilarity)
	case shards < 1 || shards > buildplan.MaxShards:
		return bad("shards (--shards) = %d is outside [1, %d]", shards, buildplan.MaxShards)
	}
	for i, c := range o.QueryKey {
		if slices.Contains(o.QueryKey[:i], c) {
			return bad("query key (--query-key): column %q is given twice", c)
		}
	}
	if o.Where != "" {
		if _, err := filter.Parse(o.Where); err != nil {
			return err
		}
	}
	return nil
}

// checkIndex checks the options that depend on the index: the where
// predicate's columns, min similarity (cosine only).
func (r *resolved) checkIndex(ctx context.Context, o Options, p *Plan) error {
	if o.MinSimilarity != nil {
		if r.ix.Snapshot().Metric != metadata.MetricCosine {
			return fmt.Errorf("%w: min similarity (--min-similarity) needs a cosine index; index %q uses %s: give --max-distance", ErrOptions, o.Index, r.ix.Snapshot().Metric)
		}
		d := 1 - *o.MinSimilarity
		p.MaxDistance = &d
	}
	if o.Where != "" {
		pred, _ := filter.Parse(o.Where)
		if _, err := r.ix.Filter(ctx, pred); err != nil {
			return err
		}
	}
	if o.Recall > 0 {
		if _, _, err := r.ix.RecallSetting(ctx, o.Recall); err != nil {
			return err
		}
	}
	return nil
}

// checkKeys checks the output's column names are distinct and, for
// --self, that the query key has the index key's types.
func (r *resolved) checkKeys(p *Plan) error {
	names := map[string]string{"_distance": "the distance column", "_rank": "the rank column"}
	for _, c := range r.qkeys {
		names["query_"+c.Name] = "query key " + c.Name
	}
	for _, c := range r.ix.KeyTypes() {
		if what, dup := names[c.Name]; dup {
			return fmt.Errorf("%w: the index key field %q has the name of %s's output column: rename one", ErrOptions, c.Name, what)
		}
	}
	if !p.Self {
		return nil
	}
	it := r.ix.KeyTypes()
	same := len(it) == len(r.qkeys)
	for i := 0; same && i < len(it); i++ {
		same = it[i].TypeName() == r.qkeys[i].TypeName()
	}
	if !same {
		return fmt.Errorf("%w: self (--self) drops the row whose key equals the query's: the query key (%s) must have the index key's types (%s)",
			ErrOptions, typeList(r.qkeys), typeList(it))
	}
	return nil
}

func typeList(ts []source.KeyType) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, t.Name+" "+t.TypeName())
	}
	return strings.Join(parts, ", ")
}

// queryBinding is how the query table is read: its vector and key
// columns, at the index's dimension. The metric is l2_squared whatever the
// index's: vectors reach SearchBatch as stored (float32, doubles rounded
// to nearest) and are normalised there exactly as search --queries
// normalises them, so that both give the same results bit for bit.
func queryBinding(p *Plan, ix *query.Index) source.Binding {
	return source.Binding{VectorField: p.QueryVector, KeyFields: p.QueryKey, Metric: metadata.MetricL2Squared, Dim: ix.Dim()}
}

// checkOutput refuses an output that holds a published join, visible
// files or (unless replace, and the plan is of one shard) a plan; with
// replace it removes the work prefix a killed Join left.
func checkOutput(ctx context.Context, b storage.Bucket, out string, replace bool) error {
	infos, err := b.List(ctx, "")
	if err != nil {
		return fmt.Errorf("output %s: %w", out, err)
	}
	var work bool
	for _, in := range infos {
		switch {
		case in.Key == SuccessKey:
			return fmt.Errorf("%w: %s holds a published join (%s): delete it or choose another output", ErrOutputExists, out, SuccessKey)
		case strings.HasPrefix(in.Key, WorkPrefix):
			work = true
		case !hiddenKey(in.Key):
			return fmt.Errorf("%w: %s holds %s, which is not a join's: the output must be a new or empty folder", ErrOutputExists, out, in.Key)
		}
	}
	if !work {
		return nil
	}
	data, err := storage.ReadAll(ctx, b, PlanKey)
	if err == nil {
		if p, perr := ParsePlan(PlanLocation(out), data); perr == nil && replace && len(p.Shards) == 1 {
			removePrefix(ctx, b, WorkPrefix)
			return nil
		}
		return fmt.Errorf("%w: %s holds the plan of another join in progress (%s): finish it (join-shard, join-commit) or delete %s/%s",
			ErrOutputExists, out, PlanLocation(out), out, WorkPrefix)
	}
	if !errors.Is(err, storage.ErrNotExist) {
		return fmt.Errorf("read %s: %w", PlanLocation(out), err)
	}
	// A work prefix without a plan: leftovers of a commit that finished
	// but was stopped before its cleanup, or of a killed Join.
	removePrefix(ctx, b, WorkPrefix)
	return nil
}

// hiddenKey reports whether a key has a path segment that Parquet readers
// skip (a leading '_' or '.').
func hiddenKey(key string) bool {
	for _, seg := range strings.Split(key, "/") {
		if strings.HasPrefix(seg, "_") || strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

// removePrefix deletes every object under prefix, best effort; in a local
// folder it removes the prefix's folder too (and the temporary files of a
// killed writer in it).
func removePrefix(ctx context.Context, b storage.Bucket, prefix string) {
	infos, err := b.List(ctx, prefix)
	if err != nil {
		return
	}
	for _, in := range infos {
		_ = b.Delete(ctx, in.Key)
	}
	if dir, ok := storage.IsLocal(b); ok {
		_ = os.RemoveAll(filepath.Join(dir, filepath.FromSlash(strings.TrimSuffix(prefix, "/"))))
	}
}

// ReadPlan reads and validates the plan at planLoc (a plan location or
// its output folder) and opens the output.
func ReadPlan(ctx context.Context, planLoc string) (*Plan, storage.Bucket, error) {
	out, err := outputOfPlan(planLoc)
	if err != nil {
		return nil, nil, err
	}
	if !strings.HasPrefix(out, "s3://") {
		// storage.Open would make a missing folder.
		if _, err := os.Stat(out); err != nil {
			return nil, nil, fmt.Errorf("read plan %s: %w", PlanLocation(out), err)
		}
	}
	b, err := storage.Open(ctx, out)
	if err != nil {
		return nil, nil, fmt.Errorf("output %s: %w", out, err)
	}
	data, err := storage.ReadAll(ctx, b, PlanKey)
	if err != nil {
		if errors.Is(err, storage.ErrNotExist) {
			if _, serr := b.Stat(ctx, SuccessKey); serr == nil {
				return nil, b, fmt.Errorf("%w: %s: the join was committed (%s/%s): its shards cannot change", ErrStalePlan, PlanLocation(out), out, SuccessKey)
			}
			return nil, nil, fmt.Errorf("read plan %s: %w", PlanLocation(out), err)
		}
		return nil, nil, fmt.Errorf("read plan %s: %w", PlanLocation(out), err)
	}
	p, err := ParsePlan(PlanLocation(out), data)
	if err != nil {
		return nil, nil, err
	}
	if p.Output != out {
		return nil, nil, fmt.Errorf("%s: %w: output: %q, but the plan is at %s (a plan is not moved)", PlanLocation(out), ErrInvalid, p.Output, out)
	}
	return p, b, nil
}

// RunShard runs shard i of the plan at planLoc: it reads the shard's query
// rows, searches them and writes the shard's parts and manifest. A rerun
// replaces an earlier run's manifest, so a failed or killed shard is run
// again; a shard of a committed plan is refused.
func RunShard(ctx context.Context, env query.Env, planLoc string, i int, ro RunOptions) (*ShardResult, error) {
	p, b, err := ReadPlan(ctx, planLoc)
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= len(p.Shards) {
		return nil, fmt.Errorf("%w: shard (--shard) %d is out of range: plan %s has shards 0 … %d", ErrOptions, i, PlanLocation(p.Output), len(p.Shards)-1)
	}
	ix, err := query.Open(ctx, env, p.Index, query.OpenOptions{SnapshotID: p.SnapshotID})
	if err != nil {
		return nil, fmt.Errorf("%w: index %q snapshot %d: %w", ErrStalePlan, p.Index, p.SnapshotID, err)
	}
	defer ix.Close()
	if ix.IndexUUID().String() != p.IndexUUID {
		return nil, fmt.Errorf("%w: index %q is now another index (uuid %s, the plan has %s): make a new plan", ErrStalePlan, p.Index, ix.IndexUUID(), p.IndexUUID)
	}
	return runShard(ctx, &resolved{plan: p, ix: ix, out: b}, i, ro)
}

// Commit publishes the output of the plan at planLoc once every shard has
// finished: it publishes each shard's parts as part-SSSSSS-NNNNN.parquet,
// writes _SUCCESS last and removes the work prefix. A missing shard is
// ErrIncomplete (nothing is published). A commit that was stopped is run
// again; one that finished returns its _SUCCESS.
func Commit(ctx context.Context, planLoc string, progress Progress) (*CommitResult, error) {
	p, b, err := ReadPlan(ctx, planLoc)
	if errors.Is(err, ErrStalePlan) && b != nil {
		out, _ := outputOfPlan(planLoc)
		data, rerr := storage.ReadAll(ctx, b, SuccessKey)
		if rerr != nil {
			return nil, fmt.Errorf("read %s/%s: %w", out, SuccessKey, rerr)
		}
		s, perr := ParseSuccess(out+"/"+SuccessKey, data)
		if perr != nil {
			return nil, perr
		}
		return &CommitResult{Output: out, Success: s}, nil
	}
	if err != nil {
		return nil, err
	}
	return commit(ctx, b, p, progress)
}
