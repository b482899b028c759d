package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parqdb/parqdb/buildplan"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/storage"
)

// age sets the modification time of the local warehouse objects whose keys
// start with one of prefixes to d ago.
func age(t *testing.T, wh string, d time.Duration, prefixes ...string) {
	t.Helper()
	old := time.Now().Add(-d)
	err := filepath.Walk(wh, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		key := filepath.ToSlash(strings.TrimPrefix(p, wh+string(filepath.Separator)))
		for _, pre := range prefixes {
			if strings.HasPrefix(key, pre) {
				return os.Chtimes(p, old, old)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func keysUnder(t *testing.T, b storage.Bucket, prefix string) int {
	t.Helper()
	infos, err := b.List(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	return len(infos)
}

// TestGCPlans: a sharded build in progress keeps its plan and centroid
// artifact even when they are older than the grace period (a shard wrote
// within it), and commits afterwards; an abandoned plan (nothing written
// within the grace period) loses everything: plan, shard files, artifact.
func TestGCPlans(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	writePart(t, filepath.Join(f.src, "p1.parquet"), 600, 600, 2)
	plan := func(name string) *indexer.PlanResult {
		pr, err := indexer.Plan(ctx, f.benv(), indexer.Options{Name: name, Source: f.src, VectorField: "embedding",
			KeyFields: []string{"id"}, NList: 8, ReuseCentroids: indexer.ReuseNever}, 2)
		if err != nil {
			t.Fatal(err)
		}
		return pr
	}
	active, abandoned := plan("active"), plan("abandoned")
	for _, pr := range []*indexer.PlanResult{active, abandoned} {
		if _, err := indexer.BuildShard(ctx, f.benv(), pr.Location, 0, indexer.ShardOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Two days pass for everything but the active plan's shard 1, which
	// runs now.
	age(t, f.wh, 48*time.Hour, "indexes/", "metadata/")
	if _, err := indexer.BuildShard(ctx, f.benv(), active.Location, 1, indexer.ShardOptions{}); err != nil {
		t.Fatal(err)
	}
	rep, err := GC(ctx, f.env, GCOptions{Grace: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ActivePlans != 1 {
		t.Fatalf("active plans %d, want 1", rep.ActivePlans)
	}
	artifactDir := func(pr *indexer.PlanResult) string {
		return strings.TrimSuffix(pr.Plan.CentroidsMetadata, "v1.metadata.json")
	}
	if n := keysUnder(t, f.env.Warehouse, buildplan.Prefix(abandoned.Plan.PostingsLocation)); n != 0 {
		t.Fatalf("the abandoned plan kept %d files", n)
	}
	if n := keysUnder(t, f.env.Warehouse, artifactDir(abandoned)); n != 0 {
		t.Fatalf("the abandoned plan's artifact kept %d files", n)
	}
	if n := keysUnder(t, f.env.Warehouse, artifactDir(active)); n != 1 {
		t.Fatalf("the active plan's artifact metadata: %d files", n)
	}
	if _, err := indexer.CommitPlan(ctx, f.benv(), active.Location, indexer.CommitOptions{}); err != nil {
		t.Fatalf("commit after gc: %v", err)
	}
	// A plan that cannot be read stops gc before it deletes anything.
	bad := plan("bad")
	if err := storage.WriteAll(ctx, f.env.Warehouse, bad.Location, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if _, err := GC(ctx, f.env, GCOptions{Grace: 24 * time.Hour}); err == nil || !strings.Contains(err.Error(), bad.Location) {
		t.Fatalf("gc over an unreadable plan: %v", err)
	}
}
