package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/parqdb/parqdb/query"
)

// TestGCKeepsCalibration: a retained snapshot's calibration file is live
// (gc leaves it, however old); once its snapshot is expired it is an
// orphan like the snapshot's other files.
func TestGCKeepsCalibration(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.create(t, "v")
	calibrateNow := func() string {
		ix, err := query.Open(ctx, query.Env{Warehouse: f.env.Warehouse, Catalog: f.env.Catalog}, "v", query.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		if _, err := ix.Recalibrate(ctx); err != nil {
			t.Fatal(err)
		}
		return query.CalibrationLocation(ix.Snapshot())
	}
	first := calibrateNow()
	later := func() time.Time { return time.Now().Add(time.Minute) }
	if _, err := GC(ctx, f.env, GCOptions{Grace: time.Second, Now: later}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.env.Warehouse.Stat(ctx, first); err != nil {
		t.Fatalf("gc deleted the current snapshot's calibration %s: %v", first, err)
	}
	f.refreshN(t, "v", 1)
	second := calibrateNow()
	if _, err := Expire(ctx, f.env, "v", ExpireOptions{RetainLast: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := GC(ctx, f.env, GCOptions{Grace: time.Second, Now: later}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.env.Warehouse.Stat(ctx, second); err != nil {
		t.Fatalf("gc deleted the retained snapshot's calibration %s: %v", second, err)
	}
	if _, err := f.env.Warehouse.Stat(ctx, first); err == nil {
		t.Fatalf("the expired snapshot's calibration %s survived gc", first)
	}
}
