package reliability_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/lifecycle"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/reliability"
)

// PARQDB_CRASH_KILLS sets the number of kills per backend (default 30, the
// CI size; docs/reliability.md gives the full command).
const crashKillsEnv = "PARQDB_CRASH_KILLS"

// skipChildren is what -short skips in the tests that run operations in
// child processes (call it first: runChildProcess may run on goroutines of
// the test, where a skip cannot stop it).
const skipChildren = "tests that run operations in child processes"

func TestCrashLocal(t *testing.T) {
	testenv.SkipShort(t, skipChildren)
	crash(t, localBackend(t, "local+sqlite", ""), envInt(crashKillsEnv, 30))
}

func TestCrashS3(t *testing.T) {
	testenv.SkipShort(t, skipChildren)
	crash(t, s3Backend(t, "s3+warehouse-catalog"), envInt(crashKillsEnv, 30))
}

// crashSeed replays a run of the random-kill tests (TestCrashLocal,
// TestCrashS3, TestSpillRandomKills): each logs the seed it drew from the
// clock, and again with the replay command when it fails.
var crashSeed = flag.Uint64("crash.seed", 0, "seed of the random-kill tests (Crash*, SpillRandomKills) to replay, as a failed run logged it; 0: a new one from the clock")

// runSeed is the seed of a random-kill test: -crash.seed, or one drawn
// from the clock. It logs the seed, and when the test fails, the command
// that replays it. A replay runs the same operations with the same kill
// points; a kill at a random time lands where the clock of the replay
// puts it.
func runSeed(t *testing.T) uint64 {
	seed := *crashSeed
	if seed == 0 {
		seed = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1)).Uint64()
	}
	t.Logf("seed %d", seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replay: go test ./reliability -run '^%s$' -crash.seed %d -v", t.Name(), seed)
		}
	})
	return seed
}

// crashOps are the operations the crash harness runs in children.
// "retrain" is a refresh that rebuilds with new centroids.
var crashOps = []string{"create", "refresh", "retrain", "optimize", "expire", "gc"}

// childRun is the outcome of one child process.
type childRun struct {
	killed   bool
	exitCode int
	lines    []string
	stderr   string
	took     time.Duration
}

// field returns the rest of the first output line starting with word.
func (r *childRun) field(word string) (string, bool) {
	for _, l := range r.lines {
		if rest, ok := strings.CutPrefix(l, word+" "); ok {
			return rest, true
		}
		if l == word {
			return "", true
		}
	}
	return "", false
}

// runChildProcess runs the test binary as a child with extra environment,
// killing it with SIGKILL after delay if delay > 0.
func runChildProcess(t *testing.T, mode string, env []string, delay time.Duration) *childRun {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+mode), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if delay > 0 {
		timer := time.AfterFunc(delay, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
		defer timer.Stop()
	}
	err := cmd.Wait()
	r := &childRun{took: time.Since(start), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		ws := ee.Sys().(syscall.WaitStatus)
		r.killed = ws.Signaled() && ws.Signal() == syscall.SIGKILL
		r.exitCode = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	sc := bufio.NewScanner(io.Reader(&stdout))
	for sc.Scan() {
		r.lines = append(r.lines, sc.Text())
	}
	return r
}

// expirable is what lifecycle.Expire with RetainLast retain may remove
// from m: the non-current snapshots beyond the retain most recent.
func expirable(m *metadata.Metadata, retain int) []int64 {
	snaps := slices.Clone(m.Snapshots)
	slices.SortFunc(snaps, func(a, b metadata.Snapshot) int { return int(b.SequenceNumber - a.SequenceNumber) })
	var ids []int64
	for i, s := range snaps {
		if s.SnapshotID != m.CurrentSnapshotID && i >= retain {
			ids = append(ids, s.SnapshotID)
		}
	}
	return ids
}

// crashStats counts what the harness did, per operation.
type crashStats struct {
	killsBefore, killsAfter, killsTimer, completed, commits map[string]int
	betweenWriteAndCommit                                   int
	gcRuns, orphansLeft                                     int
}

func (s *crashStats) kills(op string) int {
	return s.killsBefore[op] + s.killsAfter[op] + s.killsTimer[op]
}

func (s *crashStats) total() int {
	n := 0
	for _, op := range crashOps {
		n += s.kills(op)
	}
	return n
}

// crash runs operations on index "ix" (and creates of index "c") in child
// processes and kills them until kills kills have landed, checking after
// every child that the index is intact (reliability.Check), changed only
// as the operation may change it (reliability.Transition), and lost no
// committed snapshot (reliability.Ledger); and, after a third of the
// children and at the end, that gc leaves no orphan.
func crash(t *testing.T, b backend, kills int) {
	ctx := context.Background()
	e := b.open(t)
	src := newSource(t)
	res, err := indexer.Create(ctx, buildEnv(e), createOptions("ix", src))
	if err != nil {
		t.Fatal(err)
	}
	var ledger reliability.Ledger
	ledger.Committed(res.Metadata.CurrentSnapshotID)
	state, err := reliability.Check(ctx, e, "ix", probe())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(runSeed(t), 2))
	maxOps := map[string]int64{}
	took := map[string]time.Duration{}
	for _, op := range crashOps {
		maxOps[op], took[op] = 40, 300*time.Millisecond
	}
	st := &crashStats{killsBefore: map[string]int{}, killsAfter: map[string]int{}, killsTimer: map[string]int{},
		completed: map[string]int{}, commits: map[string]int{}}
	parts := 0
	start := time.Now()
	for iter := 0; st.total() < kills; iter++ {
		if iter > 10*kills+100 {
			t.Fatalf("%d children for %d kills: the kill points do not land", iter, st.total())
		}
		op := crashOps[rng.IntN(len(crashOps))]
		name := "ix"
		childEnvs := append(b.env(), childOp+"="+op, childSource+"="+src)
		change, removable := reliability.ChangeNone, []int64(nil)
		var part string
		switch op {
		case "create":
			name = "c"
		case "refresh", "retrain":
			change = reliability.ChangeAppend
			if op == "refresh" || rng.IntN(2) == 0 {
				parts++
				part = filepath.Join(src, fmt.Sprintf("p%06d.parquet", parts))
				if err := writePart(part, int64(10_000*parts), 30, uint64(parts+1)); err != nil {
					t.Fatal(err)
				}
			}
		case "optimize":
			change = reliability.ChangeAppend
		case "expire":
			change = reliability.ChangeRemove
			retain := 1 + rng.IntN(3)
			childEnvs = append(childEnvs, childRetain+"="+strconv.Itoa(retain))
			removable = expirable(state.Meta, retain)
			ledger.MayRemove(removable...)
		}
		childEnvs = append(childEnvs, childName+"="+name)
		var delay time.Duration
		mode := rng.IntN(10)
		switch {
		case mode < 7: // at a storage operation, before or after it
			childEnvs = append(childEnvs, childKillAt+"="+strconv.FormatInt(1+rng.Int64N(maxOps[op]), 10))
			if mode%2 == 1 {
				childEnvs = append(childEnvs, childKillAfter+"=1")
			}
		case mode == 7: // after the metadata file is written, before the commit
			childEnvs = append(childEnvs, childKillCommit+"=1")
		default: // at a random time
			delay = time.Duration(1 + rng.Int64N(int64(took[op])*6/5))
		}
		r := runChildProcess(t, "op", childEnvs, delay)
		switch {
		case r.killed:
			switch {
			case delay > 0:
				st.killsTimer[op]++
			case mode%2 == 1 || mode == 7:
				st.killsAfter[op]++
			default:
				st.killsBefore[op]++
			}
			if k, ok := r.field("KILL"); ok && strings.HasPrefix(k, reliability.OpPut+" ") && isIndexMetadata(reliability.OpPut, k[len(reliability.OpPut)+1:]) &&
				delay == 0 && (mode%2 == 1 || mode == 7) {
				st.betweenWriteAndCommit++
			}
		case r.exitCode != 0:
			t.Fatalf("%s %s failed without a kill (exit %d): %s", op, name, r.exitCode, r.stderr)
		default:
			st.completed[op]++
			if n, ok := r.field("OPS"); ok {
				v, _ := strconv.ParseInt(n, 10, 64)
				maxOps[op] = max(maxOps[op], v, 1)
				if st.completed[op] == 1 {
					maxOps[op] = max(v, 1) // the first real count replaces the guess
				}
			}
			took[op] = (took[op] + r.took) / 2
		}
		if _, ok := r.field("EXPIRED"); ok {
			st.commits[op]++
		}
		if id, ok := r.field("COMMITTED"); ok {
			st.commits[op]++
			if name == "ix" {
				v, _ := strconv.ParseInt(id, 10, 64)
				ledger.Committed(v)
			}
		}
		if name == "c" {
			checkCreated(t, e, r)
			continue
		}
		if part != "" {
			entry, err := e.Catalog.Load(ctx, "ix")
			if err != nil {
				t.Fatalf("after %s (killed %v): %v", op, r.killed, err)
			}
			if entry.MetadataLocation == state.Location {
				// Nothing was committed: take the part back out, so that
				// the source matches the index again and a search is not
				// refused as stale.
				if err := os.Remove(part); err != nil {
					t.Fatal(err)
				}
			}
		}
		after, err := reliability.Check(ctx, e, "ix", probe())
		if err == nil {
			err = reliability.Transition(state, after, change, removable)
		}
		if err == nil {
			err = ledger.Check(after)
		}
		if err != nil {
			t.Fatalf("after %s (killed %v, output %q): %v", op, r.killed, r.lines, err)
		}
		if id, ok := r.field("COMMITTED"); ok && strconv.FormatInt(after.Meta.CurrentSnapshotID, 10) != id {
			t.Fatalf("%s reported snapshot %s committed, but %d is current", op, id, after.Meta.CurrentSnapshotID)
		}
		state = after
		if rng.IntN(4) == 0 {
			st.orphansLeft += collect(t, e, "ix")
			st.gcRuns++
		}
	}
	st.orphansLeft += collect(t, e, "ix")
	st.gcRuns++
	report(t, b.name, st, ledger.Len(), time.Since(start))
}

// checkCreated checks index "c" after a create child: if the catalog has
// it (the commit landed, reported or not), it must check like any index;
// then it is dropped with its files so that the next create starts anew.
func checkCreated(t *testing.T, e reliability.Env, r *childRun) {
	t.Helper()
	ctx := context.Background()
	_, err := e.Catalog.Load(ctx, "c")
	if errors.Is(err, catalog.ErrNotFound) {
		if _, ok := r.field("COMMITTED"); ok {
			t.Fatalf("create reported a commit, but index c is not in the catalog")
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reliability.Check(ctx, e, "c", probe()); err != nil {
		t.Fatalf("after create (killed %v): %v", r.killed, err)
	}
	if _, err := lifecycle.Drop(ctx, lifeEnv(e), "c", true); err != nil {
		t.Fatal(err)
	}
}

func report(t *testing.T, backend string, st *crashStats, committed int, took time.Duration) {
	var b strings.Builder
	children := 0
	for _, op := range crashOps {
		children += st.kills(op) + st.completed[op]
	}
	fmt.Fprintf(&b, "crash %s: %d children, %d kills in %v (%d between a metadata write and its commit), %d snapshots committed, %d gc checks (%d orphans left by gc), failures: %d\n",
		backend, children, st.total(), took.Round(time.Second), st.betweenWriteAndCommit, committed, st.gcRuns, st.orphansLeft, boolInt(t.Failed()))
	fmt.Fprintf(&b, "| operation | kills before a storage op | kills after a storage op | kills at a random time | kills | completed | commits reported |\n")
	ops := slices.Clone(crashOps)
	sort.Strings(ops)
	for _, op := range ops {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d |\n", op, st.killsBefore[op], st.killsAfter[op], st.killsTimer[op],
			st.kills(op), st.completed[op], st.commits[op])
	}
	t.Log(b.String())
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
