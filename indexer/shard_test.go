package indexer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/buildplan"
	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/verify"
)

// shardSource writes parts files of rows rows each (keys 0…) under dir.
func shardSource(t *testing.T, dir string, parts, rows, dim int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range parts {
		writePart(t, filepath.Join(dir, fmt.Sprintf("part-%02d.parquet", i)), int64(i*rows), rows, dim, uint64(i+1))
	}
}

// searchAll runs every query on index name and returns, per query, the
// hits as "key@distance" strings.
func searchAll(t *testing.T, env Env, name string, qs [][]float32) [][]string {
	t.Helper()
	ctx := context.Background()
	ix, err := query.Open(ctx, query.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, name, query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	out := make([][]string, len(qs))
	for i, q := range qs {
		res, err := ix.Search(ctx, q, query.Options{K: 10, NProbe: 6})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			out[i] = append(out[i], fmt.Sprintf("%v@%v", h.Row["id"], h.Distance))
		}
	}
	return out
}

func mustVerify(t *testing.T, env Env, name string) {
	t.Helper()
	rep, err := verify.Run(context.Background(), verify.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, name, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("verify %s: %+v", name, rep.Failed())
	}
}

func randomQueries(n, dim int) [][]float32 {
	rng := rand.New(rand.NewPCG(9, 9))
	qs := make([][]float32, n)
	for i := range qs {
		qs[i] = make([]float32, dim)
		for j := range qs[i] {
			qs[i][j] = float32(rng.NormFloat64()) * 3
		}
	}
	return qs
}

// TestShardedCreateEqualsSingleProcess plans a build in 3 shards (over 5
// files), builds the shards in another order than their numbers, commits,
// verifies the index and compares its search results with those of a
// single-process build that reuses the same centroids.
func TestShardedCreateEqualsSingleProcess(t *testing.T) {
	ctx := context.Background()
	env, dir := testEnv(t)
	src := filepath.Join(dir, "src")
	shardSource(t, src, 5, 600, 8)
	opts := Options{Name: "sharded", Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 30}
	pr, err := Plan(ctx, env, opts, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !buildplan.IsPlanKey(pr.Location) || len(pr.Plan.Shards) != 3 {
		t.Fatalf("plan %s with %d shards", pr.Location, len(pr.Plan.Shards))
	}
	if _, err := env.Catalog.Load(ctx, "sharded"); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("a plan committed something: %v", err)
	}
	// A commit before every shard finished is refused and names the shards.
	if _, err := BuildShard(ctx, env, pr.Location, 2, ShardOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := CommitPlan(ctx, env, pr.Location, CommitOptions{}); !errors.Is(err, ErrIncompletePlan) || !strings.Contains(err.Error(), "shard(s) 0, 1 of 3") {
		t.Fatalf("commit of an incomplete plan: %v", err)
	}
	for _, i := range []int{1, 0, 0} { // shard 0 twice: the rerun replaces it
		if _, err := BuildShard(ctx, env, pr.Location, i, ShardOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pre := buildplan.PiecesPrefix(pr.Plan.PostingsLocation, 0)
	attempts, err := env.Warehouse.List(ctx, pre)
	if err != nil {
		t.Fatal(err)
	}
	folders := map[string]bool{} // attempt → its files' name prefix
	for _, a := range attempts {
		folders[a.Key[:len(pre)+17]] = true // <attempt, 16 hex>-
	}
	if len(folders) != 2 {
		t.Fatalf("shard 0 ran twice: %d attempts %v", len(folders), folders)
	}
	res, err := CommitPlan(ctx, env, pr.Location, CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 3000 || res.NList != 30 {
		t.Fatalf("committed %d rows nlist %d", res.Rows, res.NList)
	}
	mustVerify(t, env, "sharded")
	// The committed manifest lists only the attempt the shard manifest names.
	m, err := readManifest(ctx, env.Warehouse, postings.LayoutOf(pr.Plan.PostingsLocation, postings.PostingsVersion).Manifest())
	if err != nil {
		t.Fatal(err)
	}
	for f := range folders {
		used := slices.ContainsFunc(m.Files, func(fe postings.FileEntry) bool { return strings.HasPrefix(fe.Path, f) })
		named := false
		for i := range 3 {
			data, _ := storage.ReadAll(ctx, env.Warehouse, buildplan.ShardManifestLocation(pr.Plan.PostingsLocation, i))
			named = named || strings.Contains(string(data), f)
		}
		if used != named {
			t.Fatalf("attempt %s: in the manifest %v, named by its shard manifest %v", f, used, named)
		}
	}
	// The commit removed the replaced attempt's pieces: the table location
	// holds exactly the manifest's files.
	inTable, err := env.Warehouse.List(ctx, pr.Plan.PostingsLocation)
	if err != nil {
		t.Fatal(err)
	}
	if len(inTable) != len(m.Files) {
		t.Fatalf("table location holds %d objects, the manifest lists %d files", len(inTable), len(m.Files))
	}
	for i, in := range inTable {
		if !slices.ContainsFunc(m.Files, func(fe postings.FileEntry) bool { return fe.Path == in.Key }) {
			t.Fatalf("table location object %d %s is not in the manifest", i, in.Key)
		}
	}
	if _, err := CommitPlan(ctx, env, pr.Location, CommitOptions{}); !errors.Is(err, ErrStalePlan) {
		t.Fatalf("second commit of one plan: %v", err)
	}
	if _, err := BuildShard(ctx, env, pr.Location, 1, ShardOptions{}); !errors.Is(err, ErrStalePlan) || !strings.Contains(err.Error(), "was committed") {
		t.Fatalf("a shard of a committed plan: %v", err)
	}
	single, err := Create(ctx, env, Options{Name: "single", Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 30})
	if err != nil {
		t.Fatal(err)
	}
	if !single.ReusedCentroids || single.CentroidsMetadataLocation != pr.Plan.CentroidsMetadata {
		t.Fatalf("single-process build did not reuse the plan's centroids: %s", single.CentroidsMetadataLocation)
	}
	qs := randomQueries(40, 8)
	a, b := searchAll(t, env, "sharded", qs), searchAll(t, env, "single", qs)
	for i := range qs {
		if !slices.Equal(a[i], b[i]) || len(a[i]) != 10 {
			t.Fatalf("query %d: sharded %v\nsingle %v", i, a[i], b[i])
		}
	}
}

// TestShardedPlanRefusesStaleSource: a source file rewritten after the
// plan was made fails its shard and the commit, naming the file.
func TestShardedPlanRefusesStaleSource(t *testing.T) {
	ctx := context.Background()
	env, dir := testEnv(t)
	src := filepath.Join(dir, "src")
	shardSource(t, src, 2, 500, 4)
	pr, err := Plan(ctx, env, Options{Name: "v", Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 10}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := BuildShard(ctx, env, pr.Location, i, ShardOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	writePart(t, filepath.Join(src, "part-01.parquet"), 500, 400, 4, 77)
	if _, err := CommitPlan(ctx, env, pr.Location, CommitOptions{}); !errors.Is(err, ErrStalePlan) || !strings.Contains(err.Error(), `rewritten ["part-01.parquet"]`) {
		t.Fatalf("commit over a rewritten file: %v", err)
	}
	shard := 0
	if !slices.Contains(pr.Plan.Shards[0].Files, "part-01.parquet") {
		shard = 1
	}
	if _, err := BuildShard(ctx, env, pr.Location, shard, ShardOptions{}); !errors.Is(err, ErrStalePlan) || !strings.Contains(err.Error(), `"part-01.parquet"`) {
		t.Fatalf("shard over a rewritten file: %v", err)
	}
	if _, err := env.Catalog.Load(ctx, "v"); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("a stale plan committed: %v", err)
	}
	if _, err := BuildShard(ctx, env, pr.Location, 2, ShardOptions{}); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "--shard") {
		t.Fatalf("shard out of range: %v", err)
	}
	// More shards than files: the empty shards are said, and finish at once.
	pr, err = Plan(ctx, env, Options{Name: "w", Source: filepath.Join(src, "part-00.parquet"), VectorField: "embedding", KeyFields: []string{"id"}, NList: 10}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Warnings) != 1 || !strings.Contains(pr.Warnings[0], "2 of the 3 shards have no files") {
		t.Fatalf("warnings %q", pr.Warnings)
	}
	if r, err := BuildShard(ctx, env, pr.Location, 2, ShardOptions{}); err != nil || r.Rows != 0 || r.Pieces != "" {
		t.Fatalf("empty shard: %+v %v", r, err)
	}
}

// TestShardedIncrementalRefresh: a refresh with shards over appended files
// commits a successor whose manifest keeps the base files, equal in
// search results to an unsharded incremental refresh.
func TestShardedIncrementalRefresh(t *testing.T) {
	ctx := context.Background()
	env, dir := testEnv(t)
	src := filepath.Join(dir, "src")
	shardSource(t, src, 4, 500, 6)
	for _, name := range []string{"a", "b"} {
		if _, err := Create(ctx, env, Options{Name: name, Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 20}); err != nil {
			t.Fatal(err)
		}
	}
	writePart(t, filepath.Join(src, "part-10.parquet"), 10000, 150, 6, 31)
	writePart(t, filepath.Join(src, "part-11.parquet"), 20000, 150, 6, 32)
	rr, err := Refresh(ctx, env, "a", RefreshOptions{Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rr.Action != ActionIncremental || rr.Plan == nil || rr.Plan.Plan.Operation != buildplan.OpRefreshIncremental {
		t.Fatalf("refresh --shards: %+v", rr)
	}
	for i := range 2 {
		if _, err := BuildShard(ctx, env, rr.Plan.Location, i, ShardOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := CommitPlan(ctx, env, rr.Plan.Location, CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 2300 || res.Metadata.CurrentSnapshot().Summary["operation"] != "refresh-incremental" {
		t.Fatalf("committed %d rows, summary %v", res.Rows, res.Metadata.CurrentSnapshot().Summary)
	}
	mustVerify(t, env, "a")
	if _, err := Refresh(ctx, env, "b", RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	qs := randomQueries(30, 6)
	x, y := searchAll(t, env, "a", qs), searchAll(t, env, "b", qs)
	for i := range qs {
		if !slices.Equal(x[i], y[i]) {
			t.Fatalf("query %d: sharded %v\nsingle %v", i, x[i], y[i])
		}
	}
	// The plan was made on snapshot 1; the index has moved on.
	if _, err := CommitPlan(ctx, env, rr.Plan.Location, CommitOptions{}); !errors.Is(err, ErrStalePlan) {
		t.Fatalf("commit of a plan on an old snapshot: %v", err)
	}
}

// TestShardedConcurrentCommits: commits of one plan racing each other
// publish it once, and the losers leave the winner's files alone.
func TestShardedConcurrentCommits(t *testing.T) {
	ctx := context.Background()
	env, dir := testEnv(t)
	src := filepath.Join(dir, "src")
	shardSource(t, src, 3, 400, 4)
	for trial := range 4 {
		name := fmt.Sprintf("v%d", trial)
		pr, err := Plan(ctx, env, Options{Name: name, Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 10}, 2)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if _, err := BuildShard(ctx, env, pr.Location, i, ShardOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		errs := make(chan error, 3)
		for range 3 {
			go func() { _, err := CommitPlan(ctx, env, pr.Location, CommitOptions{}); errs <- err }()
		}
		won := 0
		for range 3 {
			if err := <-errs; err == nil {
				won++
			} else if !errors.Is(err, ErrStalePlan) && !errors.Is(err, catalog.ErrExists) {
				t.Fatalf("a losing commit: %v", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d commits won", won)
		}
		mustVerify(t, env, name)
	}
}

// TestShardedCommitManifestWrittenOnce: a commit that finds the plan's
// manifest already written with other contents (by a concurrent commit
// that read other shard attempts) refuses, commits nothing and deletes no
// piece: the winner's stored manifest is never replaced, which is what
// lets the winner delete the attempts it does not list.
func TestShardedCommitManifestWrittenOnce(t *testing.T) {
	ctx := context.Background()
	env, dir := testEnv(t)
	src := filepath.Join(dir, "src")
	shardSource(t, src, 2, 300, 4)
	pr, err := Plan(ctx, env, Options{Name: "once", Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 10}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := BuildShard(ctx, env, pr.Location, i, ShardOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	before, err := env.Warehouse.List(ctx, pr.Plan.PostingsLocation)
	if err != nil {
		t.Fatal(err)
	}
	mkey := postings.LayoutOf(pr.Plan.PostingsLocation, postings.PostingsVersion).Manifest()
	if err := env.Warehouse.PutIfAbsent(ctx, mkey, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if _, err := CommitPlan(ctx, env, pr.Location, CommitOptions{}); !errors.Is(err, ErrStalePlan) || !strings.Contains(err.Error(), mkey) {
		t.Fatalf("commit over another commit's manifest: %v", err)
	}
	if _, err := env.Catalog.Load(ctx, "once"); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("the refused commit committed: %v", err)
	}
	after, err := env.Warehouse.List(ctx, pr.Plan.PostingsLocation)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("the refused commit deleted pieces: %d objects, were %d", len(after), len(before))
	}
}
