package reliability_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/reliability"
	"github.com/parqdb/parqdb/storage"
)

// TestChecksDetect shows that each check of the harnesses fails when its
// invariant is broken, so that their passing means something.
func TestChecksDetect(t *testing.T) {
	ctx := context.Background()
	e := localBackend(t, "local", "").open(t)
	src := newSource(t)
	if _, err := indexer.Create(ctx, buildEnv(e), createOptions("ix", src)); err != nil {
		t.Fatal(err)
	}
	s1, err := reliability.Check(ctx, e, "ix", probe())
	if err != nil {
		t.Fatal(err)
	}
	if err := writePart(filepath.Join(src, "p000001.parquet"), 10_000, 30, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := indexer.Refresh(ctx, buildEnv(e), "ix", indexer.RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	s2, err := reliability.Check(ctx, e, "ix", probe())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("transition", func(t *testing.T) {
		if err := reliability.Transition(s1, s2, reliability.ChangeAppend, nil); err != nil {
			t.Errorf("a refresh's own change: %v", err)
		}
		for _, c := range []reliability.Change{reliability.ChangeNone, reliability.ChangeRemove} {
			if err := reliability.Transition(s1, s2, c, nil); !errors.Is(err, reliability.ErrBadTransition) {
				t.Errorf("change %d accepted an appended snapshot: %v", c, err)
			}
		}
		if err := reliability.Transition(s2, s1, reliability.ChangeAppend, nil); !errors.Is(err, reliability.ErrBadTransition) {
			t.Errorf("a lost snapshot passed as an append: %v", err)
		}
	})
	t.Run("ledger", func(t *testing.T) {
		var l reliability.Ledger
		l.Committed(s2.Meta.CurrentSnapshotID)
		if err := l.Check(s1); !errors.Is(err, reliability.ErrLostSnapshot) {
			t.Errorf("a missing committed snapshot: %v", err)
		}
		l.MayRemove(s2.Meta.CurrentSnapshotID)
		if err := l.Check(s1); err != nil {
			t.Errorf("a snapshot an expire could remove: %v", err)
		}
	})
	t.Run("orphans", func(t *testing.T) {
		if err := storage.WriteAll(ctx, e.Warehouse, "indexes/stray/file.parquet", []byte("x")); err != nil {
			t.Fatal(err)
		}
		got, err := reliability.Orphans(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		// The first metadata file is no longer current; the current one
		// references every data file of both snapshots.
		want := []string{"indexes/stray/file.parquet", s1.Location}
		if !slices.Equal(got, want) {
			t.Errorf("orphans %v, want %v", got, want)
		}
		if err := e.Warehouse.Delete(ctx, "indexes/stray/file.parquet"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		m, _, err := catalog.LoadMetadata(ctx, e.Catalog, e.Warehouse, "ix")
		if err != nil {
			t.Fatal(err)
		}
		// The first snapshot's manifest: only the older snapshot needs it.
		first := m.Snapshots[0]
		if first.SnapshotID == m.CurrentSnapshotID {
			first = m.Snapshots[1]
		}
		key := postings.SnapshotLayout(&first).Manifest()
		if err := e.Warehouse.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		if _, err := reliability.Check(ctx, e, "ix", probe()); !errors.Is(err, reliability.ErrMissingFile) {
			t.Errorf("a retained snapshot's deleted manifest: %v", err)
		}
	})
	t.Run("search", func(t *testing.T) {
		p := probe()
		p.Key = 1 // not the row whose vector is searched
		if err := reliability.CheckSearch(ctx, e, "ix", p); !errors.Is(err, reliability.ErrSearch) {
			t.Errorf("a wrong nearest neighbour: %v", err)
		}
	})
}

// TestHooks checks the storage wrappers: a failing Before hook fails the
// operation with a storage error naming it, a stall ends with the
// deadline, and the counter counts by kind.
func TestHooks(t *testing.T) {
	ctx := context.Background()
	local, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	hb := reliability.NewHookBucket(local, reliability.Hooks{Before: func(_ context.Context, op, _ string) error {
		if op == reliability.OpWrite {
			return boom
		}
		return nil
	}})
	err = storage.WriteAll(ctx, hb, "a/b", []byte("data"))
	var se *storage.Error
	if !errors.As(err, &se) || se.Op != reliability.OpWrite || se.Key != "a/b" || !errors.Is(err, boom) {
		t.Errorf("failed write: %v", err)
	}
	if _, err := local.Stat(ctx, "a/b"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("a failed write left an object: %v", err)
	}
	if d, ok := storage.IsLocal(hb); !ok || d == "" {
		t.Errorf("IsLocal does not see through the hook bucket")
	}

	h, stalled := reliability.StallAt(2)
	sb := reliability.NewHookBucket(local, h)
	// The first put must finish before the deadline, also on a busy
	// machine; the second waits for it.
	sctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := sb.PutIfAbsent(sctx, "x", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := sb.PutIfAbsent(sctx, "y", []byte("1")); !errors.Is(err, context.DeadlineExceeded) || !stalled() {
		t.Errorf("stalled put: %v (stalled %v)", err, stalled())
	}

	var c reliability.Counter
	cb := reliability.NewHookBucket(local, c.Hooks())
	if err := storage.WriteAll(ctx, cb, "z", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.ReadAll(ctx, cb, "z"); err != nil {
		t.Fatal(err)
	}
	for op, want := range map[string]int64{reliability.OpCreate: 1, reliability.OpWrite: 1, reliability.OpClose: 1, reliability.OpOpen: 1, reliability.OpRead: 1} {
		if got := c.Count(op); got != want {
			t.Errorf("%s counted %d times, want %d", op, got, want)
		}
	}
	if c.Total() != 5 {
		t.Errorf("total %d, want 5", c.Total())
	}
}
