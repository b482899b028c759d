package reliability_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/reliability"
)

// PARQDB_CONCURRENT_WRITERS lists the numbers of writer processes to run
// (default "2,8"); PARQDB_CONCURRENT_ITERS is each writer's number of
// operations (default 3).
const (
	concurrentWritersEnv = "PARQDB_CONCURRENT_WRITERS"
	concurrentItersEnv   = "PARQDB_CONCURRENT_ITERS"
)

func TestConcurrentWriters(t *testing.T) {
	testenv.SkipShort(t, skipChildren)
	var writers []int
	for _, f := range strings.Split(envString(concurrentWritersEnv, "2,8"), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n >= 2 {
			writers = append(writers, n)
		}
	}
	iters := envInt(concurrentItersEnv, 3)
	backends := []func(t *testing.T) backend{
		func(t *testing.T) backend { return localBackend(t, "sqlite", "") },
		func(t *testing.T) backend { return localBackend(t, "postgres", testenv.Postgres(t)) },
		func(t *testing.T) backend { return localBackend(t, "warehouse-catalog-local", "warehouse") },
		func(t *testing.T) backend { return s3Backend(t, "warehouse-catalog-s3") },
	}
	for _, mk := range backends {
		for _, n := range writers {
			b := mk(t)
			t.Run(fmt.Sprintf("%s/%d-writers", b.name, n), func(t *testing.T) {
				concurrent(t, b, n, iters)
			})
		}
	}
}

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// landing is one commit a writer reported.
type landing struct {
	id, seq int64
}

// concurrent runs n writer processes on one index at once — every third
// one expires, the others append a part and refresh — and checks that
// each commit landed on the latest base or failed with a clear conflict,
// and that the final history holds every landed snapshot (unless a landed
// expire removed it) with dense sequence numbers.
func concurrent(t *testing.T, b backend, n, iters int) {
	ctx := context.Background()
	e := b.open(t)
	src := newSource(t)
	res, err := indexer.Create(ctx, buildEnv(e), createOptions("ix", src))
	if err != nil {
		t.Fatal(err)
	}
	created := res.Metadata.CurrentSnapshot()
	// A few snapshots first, so that the expiring writers have work.
	var landed []landing
	for i := range 3 {
		if err := writePart(filepath.Join(src, fmt.Sprintf("pre%d.parquet", i)), int64(500_000+1000*i), 20, uint64(900+i)); err != nil {
			t.Fatal(err)
		}
		r, err := indexer.Refresh(ctx, buildEnv(e), "ix", indexer.RefreshOptions{Iterations: 5})
		if err != nil {
			t.Fatal(err)
		}
		s := r.Build.Metadata.CurrentSnapshot()
		landed = append(landed, landing{s.SnapshotID, s.SequenceNumber})
	}
	runs := make([]*childRun, n)
	roles := make([]string, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		roles[i] = "refresh"
		if i%3 == 1 {
			roles[i] = "expire"
		}
		env := append(b.env(), childName+"=ix", childSource+"="+src, childRole+"="+roles[i],
			childIters+"="+strconv.Itoa(iters), childID+"="+strconv.Itoa(i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i] = runChildProcess(t, "writer", env, 0)
		}()
	}
	wg.Wait()
	took := time.Since(start)
	removed := map[int64]bool{}
	var expires, conflicts, noops int
	for i, r := range runs {
		if r.killed || r.exitCode != 0 {
			t.Fatalf("writer %d (%s) failed (exit %d): %s", i, roles[i], r.exitCode, r.stderr)
		}
		for _, l := range r.lines {
			f := strings.Fields(l)
			switch {
			case len(f) == 4 && f[0] == "LANDED" && f[1] == "refresh":
				id, _ := strconv.ParseInt(f[2], 10, 64)
				seq, _ := strconv.ParseInt(f[3], 10, 64)
				landed = append(landed, landing{id, seq})
			case len(f) == 3 && f[0] == "LANDED" && f[1] == "expire":
				expires++
				for _, id := range parseIDs(f[2]) {
					removed[id] = true
				}
			case len(f) >= 2 && f[0] == "CONFLICT":
				conflicts++
				msg := strings.Join(f[2:], " ")
				if !strings.Contains(msg, `"ix"`) && !strings.Contains(msg, " ix") {
					t.Errorf("writer %d: a conflict that does not name the index: %s", i, msg)
				}
				if f[1] == "expire" && !strings.Contains(msg, "gave up after") {
					t.Errorf("writer %d: an expire conflict before the retries ran out: %s", i, msg)
				}
			case len(f) == 2 && f[0] == "NOOP":
				noops++
			default:
				t.Errorf("writer %d: unexpected output %q", i, l)
			}
		}
	}
	// Index what the losing refreshes appended, so that the source and the
	// index agree again; with no writer left this lands on the latest base.
	fin, err := indexer.Refresh(ctx, buildEnv(e), "ix", indexer.RefreshOptions{Iterations: 5})
	if err != nil {
		t.Fatalf("final refresh: %v", err)
	}
	if fin.Build != nil {
		s := fin.Build.Metadata.CurrentSnapshot()
		landed = append(landed, landing{s.SnapshotID, s.SequenceNumber})
	}
	st, err := reliability.Check(ctx, e, "ix", probe())
	if err != nil {
		t.Fatal(err)
	}
	// Dense: the landed refreshes hold sequence numbers 2…last, each once.
	seqs := []int64{created.SequenceNumber}
	ids := map[int64]bool{created.SnapshotID: true}
	for _, l := range landed {
		seqs = append(seqs, l.seq)
		if ids[l.id] {
			t.Errorf("snapshot id %d landed twice", l.id)
		}
		ids[l.id] = true
	}
	slices.Sort(seqs)
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("landed sequence numbers %v are not 1…%d, each once", seqs, len(seqs))
		}
	}
	if st.Meta.LastSequenceNumber != int64(len(seqs)) {
		t.Errorf("last-sequence-number %d, but %d snapshots landed", st.Meta.LastSequenceNumber, len(seqs))
	}
	for id := range ids {
		if !removed[id] && !st.Has(id) {
			t.Errorf("%v: landed snapshot %d is not in the final history %v", reliability.ErrLostSnapshot, id, st.IDs())
		}
	}
	for id := range removed {
		if !ids[id] {
			t.Errorf("an expire removed snapshot %d, which never landed", id)
		}
	}
	for _, sn := range st.Meta.Snapshots {
		if !ids[sn.SnapshotID] {
			t.Errorf("snapshot %d is in the history but no writer reported it", sn.SnapshotID)
		}
	}
	collect(t, e, "ix")
	t.Logf("concurrent %s: %d writers × %d operations in %v: %d refreshes landed (sequence 2…%d dense), %d expires landed, %d clear conflicts, %d with nothing to do; %d snapshots retained; failures: %d",
		b.name, n, iters, took.Round(time.Millisecond), len(landed), st.Meta.LastSequenceNumber, expires, conflicts, noops,
		len(st.Meta.Snapshots), boolInt(t.Failed()))
}
