package indexer

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parqdb/parqdb/catalog"
)

// cancelAt is a Progress that cancels the build's context at the first Add
// of one stage (so that stage has done part of its work), and records
// every stage's announced total and the units it added.
type cancelAt struct {
	stage  string
	cancel context.CancelFunc

	mu     sync.Mutex
	cur    string
	totals map[string]int64
	added  map[string]int64
	ended  []string
}

func (c *cancelAt) Start(stage string, total int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur = stage
	c.totals[stage] = total
}

func (c *cancelAt) SetTotal(total int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.totals[c.cur] = total
}

func (c *cancelAt) Add(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.added[c.cur] += n
	if c.cur == c.stage && c.cancel != nil {
		c.cancel()
	}
}

func (c *cancelAt) End(stage string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = append(c.ended, stage)
}

func (c *cancelAt) Warn(string) {}

// warehouseFiles lists the files under the warehouse folder except the
// SQLite catalog's own files.
func warehouseFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	root := filepath.Join(dir, "warehouse")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !strings.HasPrefix(d.Name(), "catalog.db") {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestCancelRemovesWrittenFiles cancels create, a retraining refresh and
// a forced optimize in the middle of each stage that reports progress
// (after the stage has written part of its output) and checks that the
// error is the cancellation, the catalog still names the same metadata,
// and the warehouse holds exactly the files it held before.
func TestCancelRemovesWrittenFiles(t *testing.T) {
	env, dir := testEnv(t)
	src := filepath.Join(dir, "src.parquet")
	writeSource(t, src, 4000, 12, 5)
	bg := context.Background()
	if _, err := Create(bg, env, Options{Name: "base", Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 36}); err != nil {
		t.Fatal(err)
	}
	ops := map[string]func(ctx context.Context, p Progress) error{
		"create": func(ctx context.Context, p Progress) error {
			_, err := Create(ctx, env, Options{Name: "fresh", Source: src, VectorField: "embedding", KeyFields: []string{"id"},
				NList: 36, ReuseCentroids: ReuseNever, Progress: p, Workers: 2})
			return err
		},
		"refresh": func(ctx context.Context, p Progress) error {
			_, err := Refresh(ctx, env, "base", RefreshOptions{Retrain: true, Progress: p, Workers: 2})
			return err
		},
		"optimize": func(ctx context.Context, p Progress) error {
			_, err := Optimize(ctx, env, "base", OptimizeOptions{Force: true, Progress: p, Workers: 2})
			return err
		},
	}
	for _, tc := range []struct{ op, stage string }{
		{"create", StageScan}, {"create", StageTrain}, {"create", StageAssign}, {"create", StageWrite},
		{"refresh", StageTrain}, {"refresh", StageWrite},
		{"optimize", StageWrite},
	} {
		t.Run(tc.op+"/"+tc.stage, func(t *testing.T) {
			before := warehouseFiles(t, dir)
			entry, err := env.Catalog.Load(bg, "base")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			p := &cancelAt{stage: tc.stage, cancel: cancel, totals: map[string]int64{}, added: map[string]int64{}}
			err = ops[tc.op](ctx, p)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v, want the cancellation", err)
			}
			if _, ok := p.added[tc.stage]; !ok {
				t.Fatalf("stage %s never reported progress (stages ended: %v)", tc.stage, p.ended)
			}
			if slices.Contains(p.ended, StageCommit) {
				t.Fatalf("the commit stage ran after the cancellation: %v", p.ended)
			}
			after, err := env.Catalog.Load(bg, "base")
			if err != nil || after.MetadataLocation != entry.MetadataLocation {
				t.Fatalf("catalog entry of base changed: %+v → %+v (%v)", entry, after, err)
			}
			if _, err := env.Catalog.Load(bg, "fresh"); !errors.Is(err, catalog.ErrNotFound) {
				t.Fatalf("index fresh: %v, want not found", err)
			}
			if got := warehouseFiles(t, dir); !slices.Equal(got, before) {
				t.Fatalf("warehouse files changed:\nbefore %v\nafter  %v", before, got)
			}
		})
	}
}

// TestTrainProgressCountsIterations checks that the train stage announces
// the iteration budget and adds up to exactly that total.
func TestTrainProgressCountsIterations(t *testing.T) {
	env, dir := testEnv(t)
	src := filepath.Join(dir, "src.parquet")
	writeSource(t, src, 3000, 8, 9)
	p := &cancelAt{totals: map[string]int64{}, added: map[string]int64{}}
	if _, err := Create(context.Background(), env, Options{Name: "v", Source: src, VectorField: "embedding",
		KeyFields: []string{"id"}, NList: 25, Iterations: 6, Progress: p}); err != nil {
		t.Fatal(err)
	}
	// 6 iterations for the root k-means and for each of the 5 roots, and
	// 3 rounds of boundary refinement (docs/ivf.md, step 6b).
	if p.totals[StageTrain] != 39 || p.added[StageTrain] != 39 {
		t.Fatalf("train: total %d, added %d, want 39 and 39", p.totals[StageTrain], p.added[StageTrain])
	}
	if !slices.Equal(p.ended, []string{StageScan, StageTrain, StageAssign, StageWrite, StageCommit}) {
		t.Fatalf("stages ended: %v", p.ended)
	}
}
