package catalog_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/storage"
)

// baseMetadata is the initial metadata of the test index (testdata).
func baseMetadata(t testing.TB) *metadata.Metadata {
	t.Helper()
	data, err := os.ReadFile("testdata/base.metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := metadata.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// successor returns a successor of base whose summary names its writer and
// step, so that a lost or duplicated commit shows.
func successor(base *metadata.Metadata, writer string, step int) (*metadata.Metadata, error) {
	s := base.CurrentSnapshot().Clone()
	s.TimestampMs = 0
	s.Summary = map[string]string{"writer": writer, "step": strconv.Itoa(step)}
	return metadata.Successor(base, s, time.Now().UnixMilli())
}

// createTestIndex creates index name from testdata and returns its location.
func createTestIndex(t testing.TB, cat catalog.Catalog, wh storage.Bucket, name string) string {
	t.Helper()
	m := baseMetadata(t)
	loc, err := catalog.CreateIndex(context.Background(), cat, wh, name, m, m.CurrentSnapshot().SourceTable)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// commitMany runs writers goroutines, each committing steps successors of
// index name through catalog.Update; it counts the metadata files written
// (committed or not) in writes and returns the committed locations.
func commitMany(ctx context.Context, cat catalog.Catalog, wh storage.Bucket, name, prefix string, writers, steps int,
	writes *atomic.Int64) ([]string, error) {
	locs := make([][]string, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			id := fmt.Sprintf("%s%d", prefix, w)
			for step := range steps {
				_, loc, err := catalog.Update(ctx, cat, wh, name,
					func(base *metadata.Metadata, e catalog.Entry) (*metadata.Metadata, *catalog.Entry, error) {
						m, err := successor(base, id, step)
						return m, nil, err
					},
					catalog.MaxAttempts(100000), catalog.AfterWrite(func(context.Context, string) error { writes.Add(1); return nil }))
				if err != nil {
					errs[w] = fmt.Errorf("writer %s step %d: %w", id, step, err)
					return
				}
				locs[w] = append(locs[w], loc)
			}
		})
	}
	wg.Wait()
	return slices.Concat(locs...), errors.Join(errs...)
}

// checkHistory checks the final metadata of index name after writers ×
// steps commits: every commit present exactly once, sequence numbers
// 1..N+1 dense, every committed file present, and committed files valid
// with the history they should have: all of them when every is 1, else
// every every-th in commit order and the last (parsing is most of the
// cost of this check).
func checkHistory(t *testing.T, cat catalog.Catalog, wh storage.Bucket, name string, writerIDs []string, steps int, locs []string, every int) {
	t.Helper()
	ctx := context.Background()
	m, e, err := catalog.LoadMetadata(ctx, cat, wh, name)
	if err != nil {
		t.Fatal(err)
	}
	total := len(writerIDs)*steps + 1
	if len(m.Snapshots) != total || m.LastSequenceNumber != int64(total) {
		t.Fatalf("final metadata has %d snapshots, last-sequence-number %d; want %d", len(m.Snapshots), m.LastSequenceNumber, total)
	}
	seen := map[string]bool{}
	for i, s := range m.Snapshots {
		if s.SequenceNumber != int64(i+1) {
			t.Fatalf("snapshot %d has sequence number %d", i, s.SequenceNumber)
		}
		if i == 0 {
			continue
		}
		k := s.Summary["writer"] + "/" + s.Summary["step"]
		if seen[k] {
			t.Fatalf("commit %s appears twice", k)
		}
		seen[k] = true
	}
	for _, w := range writerIDs {
		for step := range steps {
			if k := w + "/" + strconv.Itoa(step); !seen[k] {
				t.Fatalf("commit %s is lost", k)
			}
		}
	}
	// Every committed file is still there and valid (Parse validates), and
	// its snapshots are a prefix of the final history.
	if len(locs) != total-1 {
		t.Fatalf("%d committed locations, want %d", len(locs), total-1)
	}
	if !slices.Contains(locs, e.MetadataLocation) {
		t.Fatalf("current location %s was not returned by any Update", e.MetadataLocation)
	}
	slices.Sort(locs) // commit order: the names start with the sequence number
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, loc := range locs {
		g.Go(func() error {
			if i%every != 0 && i != len(locs)-1 {
				_, err := wh.Stat(ctx, loc)
				return err
			}
			f, err := catalog.ReadMetadata(ctx, wh, loc)
			if err != nil {
				return fmt.Errorf("committed file: %w", err)
			}
			n := int(f.LastSequenceNumber)
			if len(f.Snapshots) != n || f.Snapshots[n-1].Summary["writer"] != m.Snapshots[n-1].Summary["writer"] ||
				f.Snapshots[n-1].Summary["step"] != m.Snapshots[n-1].Summary["step"] {
				return fmt.Errorf("%s: its %d snapshots are not a prefix of the final history", loc, len(f.Snapshots))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

// TestUpdateConcurrent has 16 goroutines commit 50 successors each to one
// index. They share 2 catalog handles, 8 goroutines per handle: Update
// serialises goroutines of one handle, so the handles race like separate
// processes and lose commits to each other. SQLite and the warehouse
// catalog on a local folder run the same load from 4 processes in
// TestUpdateProcesses.
func TestUpdateConcurrent(t *testing.T) {
	t.Parallel()
	const handles, perHandle = 2, 8
	steps := acceptanceSteps()
	kinds := []struct {
		name string
		// new returns a function opening a handle on one shared catalog.
		new func(t *testing.T) (func() catalog.Catalog, storage.Bucket)
	}{
		{"PostgreSQL", func(t *testing.T) (func() catalog.Catalog, storage.Bucket) {
			dsn := testenv.Postgres(t)
			return func() catalog.Catalog { return must(catalog.OpenPostgres(context.Background(), dsn)) }, newLocal(t)
		}},
		{"WarehouseS3", func(t *testing.T) (func() catalog.Catalog, storage.Bucket) {
			b := newS3(t)
			return func() catalog.Catalog { return catalog.NewWarehouse(b) }, b
		}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			open, wh := k.new(t)
			cats := make([]catalog.Catalog, handles)
			for i := range cats {
				cats[i] = open()
				defer cats[i].Close()
			}
			createTestIndex(t, cats[0], wh, "docs")
			start := time.Now()
			var writes atomic.Int64
			locs := make([][]string, handles)
			errs := make([]error, handles)
			var wg sync.WaitGroup
			for h := range handles {
				wg.Go(func() {
					locs[h], errs[h] = commitMany(context.Background(), cats[h], wh, "docs", fmt.Sprintf("h%d-", h), perHandle, steps, &writes)
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d commits in %v, %d files written", handles*perHandle*steps, time.Since(start), writes.Load())
			var ids []string
			for h := range handles {
				for g := range perHandle {
					ids = append(ids, fmt.Sprintf("h%d-%d", h, g))
				}
			}
			// The process test parses every file; here every 8th.
			checkHistory(t, cats[0], wh, "docs", ids, steps, slices.Concat(locs...), 8)
		})
	}
}

// TestUpdateProcesses has 4 processes with 4 goroutines each commit 50
// successors each to one index in a local warehouse.
func TestUpdateProcesses(t *testing.T) {
	t.Parallel()
	const procs, perProc = 4, 4
	steps := acceptanceSteps()
	for _, kind := range []string{"SQLite", "WarehouseLocal"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			wh := newLocal(t)
			spec := "warehouse"
			if kind == "SQLite" {
				spec = "" // the default: catalog.db in the local warehouse
			}
			cat := must(catalog.Open(context.Background(), spec, wh))
			defer cat.Close()
			createTestIndex(t, cat, wh, "docs")
			start := time.Now()
			type result struct {
				cmd  *exec.Cmd
				locs chan []string
			}
			children := make([]result, procs)
			for p := range procs {
				cmd, out := startChild(t, "update", spec, wh.Dir(),
					childPrefix+"="+fmt.Sprintf("p%d-", p), childWriters+"="+strconv.Itoa(perProc), childSteps+"="+strconv.Itoa(steps))
				ch := make(chan []string, 1)
				go func() { ch <- lines(out, "LOC") }()
				children[p] = result{cmd, ch}
			}
			var locs []string
			for p, c := range children {
				l := <-c.locs
				if err := c.cmd.Wait(); err != nil {
					t.Fatalf("child %d: %v", p, err)
				}
				locs = append(locs, l...)
			}
			t.Logf("%d commits from %d processes in %v", procs*perProc*steps, procs, time.Since(start))
			var ids []string
			for p := range procs {
				for g := range perProc {
					ids = append(ids, fmt.Sprintf("p%d-%d", p, g))
				}
			}
			checkHistory(t, cat, wh, "docs", ids, steps, locs, 1)
		})
	}
}

// TestCrashBeforeCommit kills a writer (SIGKILL) after it wrote its
// metadata file and before its commit: the catalog still names the old,
// valid file, the new file is an orphan, and writers carry on.
func TestCrashBeforeCommit(t *testing.T) {
	for _, kind := range []string{"SQLite", "PostgreSQL", "WarehouseLocal"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			wh := newLocal(t)
			spec := map[string]string{"SQLite": "", "WarehouseLocal": "warehouse"}[kind]
			if kind == "PostgreSQL" {
				spec = testenv.Postgres(t)
			}
			cat := must(catalog.Open(ctx, spec, wh))
			defer cat.Close()
			old := createTestIndex(t, cat, wh, "docs")

			cmd, out := startChild(t, "crash", spec, wh.Dir())
			sc := bufio.NewScanner(out)
			var orphan string
			for sc.Scan() {
				if v, ok := strings.CutPrefix(sc.Text(), "WROTE "); ok {
					orphan = v
					break
				}
			}
			if orphan == "" {
				_ = cmd.Wait()
				t.Fatal("the child wrote no metadata file")
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err == nil {
				t.Fatal("the child exited cleanly; want killed")
			}

			e, err := cat.Load(ctx, "docs")
			if err != nil {
				t.Fatal(err)
			}
			if e.MetadataLocation != old {
				t.Fatalf("catalog names %s after the crash, want the old %s", e.MetadataLocation, old)
			}
			m, err := catalog.ReadMetadata(ctx, wh, old)
			if err != nil || m.LastSequenceNumber != 1 {
				t.Fatalf("old metadata: %v (last-sequence-number %v)", err, m)
			}
			if o, err := catalog.ReadMetadata(ctx, wh, orphan); err != nil || o.LastSequenceNumber != 2 {
				t.Fatalf("orphan %s: %v", orphan, err)
			}
			// The next writer builds on the old file, beside the orphan.
			next, loc, err := catalog.Update(ctx, cat, wh, "docs",
				func(base *metadata.Metadata, e catalog.Entry) (*metadata.Metadata, *catalog.Entry, error) {
					m, err := successor(base, "after", 0)
					return m, nil, err
				})
			if err != nil || loc == orphan || next.LastSequenceNumber != 2 {
				t.Fatalf("Update after the crash: %v, location %s", err, loc)
			}
			if _, err := wh.Stat(ctx, orphan); err != nil {
				t.Fatalf("orphan: %v", err)
			}
		})
	}
}

// acceptanceSteps is how many successors each writer commits: 50, or 10
// under the race detector, which runs the same interleavings several times
// slower (make test commits all 50; the checks are the same). The cost
// grows with the square of the commits, as every metadata file holds all
// earlier snapshots. -short skips both tests that use it (they need
// PostgreSQL, S3 or child processes).
func acceptanceSteps() int {
	if testenv.RaceDetector {
		return 10
	}
	return 50
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
