package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/lifecycle"
	"github.com/parqdb/parqdb/reliability"
	"github.com/parqdb/parqdb/storage"
)

// PARQDB_FAULT_POSITIONS is how many positions (spread from the first to
// the last call of that kind) each fault is injected at, per operation
// (default 3).
const faultPositionsEnv = "PARQDB_FAULT_POSITIONS"

// faultKind is one way storage fails.
type faultKind struct {
	name  string
	op    string // the storage operation it hits (reliability.Op*)
	cause error  // what errors.Is must find in the operation's error
	wrap  func(b storage.Bucket, nth int64) storage.Bucket
}

func withFaults(f func(nth int64) *storage.Faults) func(storage.Bucket, int64) storage.Bucket {
	return func(b storage.Bucket, nth int64) storage.Bucket { return storage.WithFaults(b, f(nth)) }
}

var faultKinds = []faultKind{
	{"failed write", reliability.OpWrite, storage.ErrInjected, withFaults(func(n int64) *storage.Faults { return &storage.Faults{FailWrite: n} })},
	{"failed close", reliability.OpClose, storage.ErrInjected, withFaults(func(n int64) *storage.Faults { return &storage.Faults{FailClose: n} })},
	{"failed put-if-absent", reliability.OpPut, storage.ErrInjected, withFaults(func(n int64) *storage.Faults { return &storage.Faults{FailPut: n} })},
	{"full disk on write", reliability.OpWrite, syscall.ENOSPC, withFaults(func(n int64) *storage.Faults {
		return &storage.Faults{FailWrite: n, Err: syscall.ENOSPC}
	})},
	{"full disk on put-if-absent", reliability.OpPut, syscall.ENOSPC, withFaults(func(n int64) *storage.Faults {
		return &storage.Faults{FailPut: n, Err: syscall.ENOSPC}
	})},
	{"failed open", reliability.OpOpen, storage.ErrInjected, withFaults(func(n int64) *storage.Faults { return &storage.Faults{FailOpen: n} })},
	{"failed read", reliability.OpRead, storage.ErrInjected, withFaults(func(n int64) *storage.Faults { return &storage.Faults{FailRead: n} })},
	{"short read", reliability.OpRead, io.ErrUnexpectedEOF, withFaults(func(n int64) *storage.Faults { return &storage.Faults{ShortRead: n} })},
	{"timeout", "", context.DeadlineExceeded, func(b storage.Bucket, n int64) storage.Bucket {
		h, _ := reliability.StallAt(n)
		return reliability.NewHookBucket(b, h)
	}},
}

// faultOp is one operation under test, run in this process.
type faultOp struct {
	name    string
	prepare func(t *testing.T) // gives the operation work to do
	run     func(ctx context.Context, e reliability.Env) (committed bool, err error)
	entry   string // the catalog entry it may change
}

// TestFaults runs create, refresh (incremental and rebuild), optimize,
// expire and gc with one storage fault at a time — failed writes, closes,
// put-if-absents, opens and reads, short reads, a full disk, a stalled
// request past the deadline — at positions spread over all such calls of
// the operation. Every operation must either succeed (the fault hit a
// call whose failure is absorbed) or fail with an error that wraps the
// storage error and its cause, leave the catalog entry as it was, and
// succeed when retried without the fault; the index must check after each.
func TestFaults(t *testing.T) {
	ctx := context.Background()
	b := localBackend(t, "local+sqlite", "")
	e := b.open(t)
	src := newSource(t)
	if _, err := indexer.Create(ctx, buildEnv(e), createOptions("ix", src)); err != nil {
		t.Fatal(err)
	}
	parts := 0
	appendPart := func(t *testing.T) {
		parts++
		if err := writePart(filepath.Join(src, fmt.Sprintf("f%05d.parquet", parts)), int64(100_000+100*parts), 20, uint64(parts+500)); err != nil {
			t.Fatal(err)
		}
	}
	refresh := func(retrain bool) func(ctx context.Context, e reliability.Env) (bool, error) {
		return func(ctx context.Context, e reliability.Env) (bool, error) {
			r, err := indexer.Refresh(ctx, buildEnv(e), "ix", indexer.RefreshOptions{Retrain: retrain, Iterations: 5})
			return err == nil && r.Build != nil, err
		}
	}
	gcOpts := lifecycle.GCOptions{Grace: time.Nanosecond, GraceSet: true, Now: func() time.Time { return time.Now().Add(time.Hour) }}
	ops := []faultOp{
		{"create", func(t *testing.T) { dropIfExists(t, e, "c") }, func(ctx context.Context, e reliability.Env) (bool, error) {
			_, err := indexer.Create(ctx, buildEnv(e), createOptions("c", src))
			return err == nil, err
		}, "c"},
		{"refresh", appendPart, refresh(false), "ix"},
		{"retrain", func(*testing.T) {}, refresh(true), "ix"},
		{"optimize", func(*testing.T) {}, func(ctx context.Context, e reliability.Env) (bool, error) {
			r, err := indexer.Optimize(ctx, buildEnv(e), "ix", indexer.OptimizeOptions{Force: true})
			return err == nil && r.Done, err
		}, "ix"},
		{"expire", func(t *testing.T) {
			appendPart(t)
			if _, err := indexer.Refresh(ctx, buildEnv(e), "ix", indexer.RefreshOptions{Iterations: 5}); err != nil {
				t.Fatal(err)
			}
		}, func(ctx context.Context, e reliability.Env) (bool, error) {
			r, err := lifecycle.Expire(ctx, lifeEnv(e), "ix", lifecycle.ExpireOptions{RetainLast: 1})
			return err == nil && len(r.Removed) > 0, err
		}, "ix"},
		{"gc", func(t *testing.T) {
			// Orphans for gc to find: the files of an expired snapshot.
			appendPart(t)
			if _, err := indexer.Refresh(ctx, buildEnv(e), "ix", indexer.RefreshOptions{Iterations: 5}); err != nil {
				t.Fatal(err)
			}
			if _, err := lifecycle.Expire(ctx, lifeEnv(e), "ix", lifecycle.ExpireOptions{RetainLast: 1}); err != nil {
				t.Fatal(err)
			}
		}, func(ctx context.Context, e reliability.Env) (bool, error) {
			_, err := lifecycle.GC(ctx, lifeEnv(e), gcOpts)
			return false, err
		}, ""},
	}
	positions := envInt(faultPositionsEnv, 3)
	type tally struct{ failed, absorbed, unreached int }
	tallies := map[string]*tally{}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			// Count the operation's storage calls on a clean run.
			op.prepare(t)
			var c reliability.Counter
			if _, err := op.run(ctx, reliability.Env{Warehouse: reliability.NewHookBucket(e.Warehouse, c.Hooks()), Catalog: e.Catalog}); err != nil {
				t.Fatalf("clean run: %v", err)
			}
			checkAll(t, e)
			for _, k := range faultKinds {
				calls := c.Total()
				if k.op != "" {
					calls = c.Count(k.op)
				}
				for _, nth := range spread(calls, positions) {
					op.prepare(t)
					before := entryLocation(t, e, op.entry)
					runCtx, cancel := ctx, context.CancelFunc(func() {})
					if k.cause == context.DeadlineExceeded {
						runCtx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
					}
					wh, hitKey := recordNth(k.wrap(e.Warehouse, nth), k.op, nth)
					_, err := op.run(runCtx, reliability.Env{Warehouse: wh, Catalog: e.Catalog})
					cancel()
					key := op.name + ": " + k.name
					if tallies[key] == nil {
						tallies[key] = &tally{}
					}
					if err == nil {
						if hitKey() == "" {
							tallies[key].unreached++ // this run made fewer such calls
						} else {
							tallies[key].absorbed++
						}
						checkAll(t, e)
						continue
					}
					tallies[key].failed++
					switch {
					case !errors.Is(err, k.cause):
						t.Errorf("%s at call %d: the error does not wrap %v: %v", key, nth, k.cause, err)
					case k.op != "" && !strings.Contains(err.Error(), hitKey()):
						// A deadline may surface from any stage's context
						// check, so only injected faults must name the file.
						t.Errorf("%s at call %d: the error does not name %s: %v", key, nth, hitKey(), err)
					}
					if after := entryLocation(t, e, op.entry); after != before {
						t.Errorf("%s at call %d failed (%v) but changed the catalog: %q → %q", key, nth, err, before, after)
					}
					if _, err := op.run(ctx, e); err != nil {
						t.Fatalf("%s at call %d: retry without the fault: %v", key, nth, err)
					}
					checkAll(t, e)
				}
			}
			if op.name == "create" {
				dropIfExists(t, e, "c") // it would go stale as the source grows
			}
		})
	}
	collect(t, e, "ix")
	var keys []string
	for k := range tallies {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	total := 0
	for _, k := range keys {
		fmt.Fprintf(&sb, "| %s | %d | %d | %d |\n", k, tallies[k].failed, tallies[k].absorbed, tallies[k].unreached)
		total += tallies[k].failed + tallies[k].absorbed + tallies[k].unreached
	}
	t.Logf("faults: %d injections; failures: %d\n| operation: fault | failed cleanly, retried | absorbed (succeeded) | not reached |\n%s", total, boolInt(t.Failed()), sb.String())
}

// recordNth wraps b to remember the key of the nth call of kind op ("" for
// every kind): the object a fault injected at that call hits.
func recordNth(b storage.Bucket, op string, nth int64) (storage.Bucket, func() string) {
	var mu sync.Mutex
	var n int64
	var key string
	return reliability.NewHookBucket(b, reliability.Hooks{
			// Without a named operation, the nth call of any kind is the
			// one hit.
			Before: func(_ context.Context, o, k string) error {
				mu.Lock()
				defer mu.Unlock()
				if op == "" {
					if n++; n == nth {
						key = k
					}
				}
				return nil
			},
			// With one, record the call that failed: counting calls here
			// would race with the fault wrapper's own count when several
			// goroutines write at once (postings buckets are written in
			// parallel), and name a different call than the one that failed.
			After: func(_ context.Context, o, k string, err error) {
				mu.Lock()
				defer mu.Unlock()
				// A missing object is an answer, not a fault: optional
				// files (a vectors file, a calibration) are probed by
				// opening them.
				if op != "" && o == op && err != nil && !errors.Is(err, storage.ErrNotExist) && key == "" {
					key = k
				}
			},
		}), func() string {
			mu.Lock()
			defer mu.Unlock()
			return key
		}
}

// spread returns up to n call numbers from 1 to calls, evenly spread and
// including both ends.
func spread(calls int64, n int) []int64 {
	if calls <= 0 {
		return nil
	}
	var out []int64
	for i := range n {
		v := int64(1)
		if n > 1 {
			v = 1 + int64(i)*(calls-1)/int64(n-1)
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// entryLocation is the catalog's metadata location of name, "" when name
// is "" or not in the catalog.
func entryLocation(t *testing.T, e reliability.Env, name string) string {
	t.Helper()
	if name == "" {
		return ""
	}
	en, err := e.Catalog.Load(context.Background(), name)
	if errors.Is(err, catalog.ErrNotFound) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return en.MetadataLocation
}

// checkAll checks every index in the catalog.
func checkAll(t *testing.T, e reliability.Env) {
	t.Helper()
	ctx := context.Background()
	names, err := e.Catalog.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if _, err := reliability.Check(ctx, e, n, probe()); err != nil {
			t.Fatal(err)
		}
	}
}

func dropIfExists(t *testing.T, e reliability.Env, name string) {
	t.Helper()
	_, err := lifecycle.Drop(context.Background(), lifeEnv(e), name, true)
	if err != nil && !errors.Is(err, catalog.ErrNotFound) {
		t.Fatal(err)
	}
}
