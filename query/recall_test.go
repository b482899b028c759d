package query_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
)

// recallIndex builds a 4,000-row synthetic lvq8 index with 40 lists.
func recallIndex(t *testing.T) (indexer.Env, query.Env, []synthRow) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "synth.parquet")
	rows := synthRows(5, 0, 4000, 24)
	writeSynth(t, src, rows)
	benv, env := localEnv(t)
	buildIndex(t, benv, src, metadata.EncodingLVQ8, 40)
	return benv, env, rows
}

func openVecs(t *testing.T, env query.Env) *query.Index {
	t.Helper()
	ix, err := query.Open(context.Background(), env, "vecs", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// TestCalibrationDeterministic: two computations on two opens of the same
// snapshot give identical curves, and the file written is the one read.
func TestCalibrationDeterministic(t *testing.T) {
	ctx := context.Background()
	_, env, _ := recallIndex(t)
	c1, err := openVecs(t, env).Recalibrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := openVecs(t, env).Recalibrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c1, c2) {
		t.Fatalf("two calibrations differ:\n%+v\n%+v", c1.Points, c2.Points)
	}
	if len(c1.Points) < 5 {
		t.Fatalf("only %d points measured: %+v", len(c1.Points), c1.Points)
	}
	ix := openVecs(t, env)
	stored, err := query.ReadCalibration(ctx, env.Warehouse, uuidOf(ix), ix.Snapshot())
	if err != nil || stored == nil {
		t.Fatalf("stored calibration: %v, %v", stored, err)
	}
	if !reflect.DeepEqual(stored, c1) {
		t.Fatalf("stored calibration differs from the computed one")
	}
}

// TestRecallTargetMet: on queries that are not source rows, a search with
// Options.Recall reaches the target (less 0.02: 100 queries), and the
// setting picked for a low target is cheaper than scanning every list.
func TestRecallTargetMet(t *testing.T) {
	ctx := context.Background()
	_, env, _ := recallIndex(t)
	ix := openVecs(t, env)
	var qs [][]float32
	for _, r := range synthRows(77, 100000, 100, 24) {
		qs = append(qs, r.Vec)
	}
	truth, err := ix.ExactBatch(ctx, qs, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []float64{0.8, 0.9, 0.95, 0.99} {
		res, err := ix.SearchBatch(ctx, qs, query.Options{K: 10, Recall: target, NoRows: true}, 0)
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for qi, r := range res {
			want := map[string]bool{}
			for _, k := range keysOf(truth[qi]) {
				want[k] = true
			}
			for _, h := range r.Hits {
				if want[string(h.Key)] {
					found++
				}
			}
		}
		got := float64(found) / float64(10*len(qs))
		p, met, err := ix.RecallSetting(ctx, target)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("target %.2f: nprobe %d refine %d calibrated %.4f, held-out %.4f", target, p.NProbe, p.Refine, p.Recall, got)
		if !met || got < target-0.02 {
			t.Errorf("target %.2f: held-out recall %.4f with nprobe %d refine %d (met %v)", target, got, p.NProbe, p.Refine, met)
		}
		if target == 0.8 && p.NProbe >= ix.NList() {
			t.Errorf("target 0.8 picked nprobe %d = nlist: no cheaper setting chosen", p.NProbe)
		}
	}
	if _, err := query.ReadCalibration(ctx, env.Warehouse, uuidOf(ix), ix.Snapshot()); err != nil {
		t.Fatal(err)
	}
}

// TestCalibrationStale: after a refresh the old snapshot's calibration is
// not used for the new snapshot; a file at the new snapshot's location
// that is bound to another snapshot is ignored and replaced on first use.
func TestCalibrationStale(t *testing.T) {
	ctx := context.Background()
	benv, env, _ := recallIndex(t)
	old := openVecs(t, env)
	if _, err := old.Recalibrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := indexer.Refresh(ctx, benv, "vecs", indexer.RefreshOptions{Retrain: true, Seed: 77}); err != nil {
		t.Fatal(err)
	}
	ix := openVecs(t, env)
	if ix.Snapshot().SnapshotID == old.Snapshot().SnapshotID {
		t.Fatal("refresh committed no new snapshot")
	}
	uuid := uuidOf(ix)
	if c, err := query.ReadCalibration(ctx, env.Warehouse, uuid, ix.Snapshot()); err != nil || c != nil {
		t.Fatalf("new snapshot has a calibration before any use: %v, %v", c, err)
	}
	// Plant the old snapshot's calibration at the new one's location.
	oldC, err := query.ReadCalibration(ctx, env.Warehouse, uuid, old.Snapshot())
	if err != nil || oldC == nil {
		t.Fatalf("old calibration: %v, %v", oldC, err)
	}
	data, err := oldC.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	loc := query.CalibrationLocation(ix.Snapshot())
	w, err := env.Warehouse.Create(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if c, _ := query.ReadCalibration(ctx, env.Warehouse, uuid, ix.Snapshot()); c != nil {
		t.Fatalf("a calibration bound to snapshot %d was accepted for snapshot %d", c.SnapshotID, ix.Snapshot().SnapshotID)
	}
	if _, err := ix.Search(ctx, make([]float32, 24), query.Options{Recall: 0.9}); err != nil {
		t.Fatal(err)
	}
	c, err := query.ReadCalibration(ctx, env.Warehouse, uuid, ix.Snapshot())
	if err != nil || c == nil || c.SnapshotID != ix.Snapshot().SnapshotID {
		t.Fatalf("first use did not store a calibration of snapshot %d: %+v, %v", ix.Snapshot().SnapshotID, c, err)
	}
	// A damaged file is ignored too.
	w, _ = env.Warehouse.Create(ctx, loc)
	w.Write([]byte(`{"format-version": 1, "points": [`))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err := query.ReadCalibration(ctx, env.Warehouse, uuid, ix.Snapshot()); c != nil || err != nil {
		t.Fatalf("damaged file: %v, %v", c, err)
	}

}

func TestRecallErrors(t *testing.T) {
	ctx := context.Background()
	_, env, _ := recallIndex(t)
	ix := openVecs(t, env)
	q := make([]float32, 24)
	for _, tc := range []struct {
		name string
		opts query.Options
	}{
		{"negative", query.Options{Recall: -0.5}},
		{"above one", query.Options{Recall: 1.01}},
		{"NaN", query.Options{Recall: math.NaN()}},
		{"with nprobe", query.Options{Recall: 0.9, NProbe: 4}},
		{"with refine", query.Options{Recall: 0.9, Refine: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ix.Search(ctx, q, tc.opts)
			if !errors.Is(err, query.ErrBadQuery) {
				t.Fatalf("got %v, want ErrBadQuery", err)
			}
		})
	}
	if _, _, err := ix.RecallSetting(ctx, 0); !errors.Is(err, query.ErrBadQuery) {
		t.Fatalf("RecallSetting(0): %v", err)
	}

}

func uuidOf(ix *query.Index) string {
	m, _ := ix.Metadata()
	return m.IndexUUID
}

// TestWarmRecall: Warm with Options.Recall calibrates (and stores) up
// front, and refuses a bad recall like Search.
func TestWarmRecall(t *testing.T) {
	ctx := context.Background()
	_, env, _ := recallIndex(t)
	ix := openVecs(t, env)
	if err := ix.Warm(ctx, query.Options{Recall: 1.5}); !errors.Is(err, query.ErrBadQuery) {
		t.Fatalf("Warm(recall 1.5): %v", err)
	}
	if err := ix.Warm(ctx, query.Options{Recall: 0.9}); err != nil {
		t.Fatal(err)
	}
	if c, err := query.ReadCalibration(ctx, env.Warehouse, uuidOf(ix), ix.Snapshot()); err != nil || c == nil {
		t.Fatalf("Warm stored no calibration: %v, %v", c, err)
	}
}
