package artifact

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parqdb/parqdb/ivf"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/storage"
)

func trained(t *testing.T, dim, nlist int) *ivf.Centroids {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	sample := make([]float32, 400*dim)
	for i := range sample {
		sample[i] = float32(rng.NormFloat64())
	}
	c, _, err := ivf.Train(context.Background(), sample, dim, ivf.TrainConfig{NList: nlist, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestWriteLoadRoundTrip(t *testing.T) {
	ctx := context.Background()
	wh, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := trained(t, 6, 12)
	desc := metadata.Descriptor{VectorField: "v", Dimension: 6, Metric: metadata.MetricL2Squared, NList: 12, ClusteringProfileVersion: 1}
	a, w, err := Write(ctx, wh, c, desc, 1700000000000)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Keys) != 3 || w.Bytes == 0 {
		t.Fatalf("written %+v", w)
	}
	cm, err := ReadMeta(ctx, wh, a.Location)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Fingerprint != metadata.Fingerprint(desc) || cm.Descriptor != desc {
		t.Fatalf("metadata %+v", cm)
	}
	got, err := LoadTables(ctx, wh, cm)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Codes, c.Codes) || !slices.Equal(got.Offsets, c.Offsets) || !slices.Equal(got.Scales, c.Scales) ||
		!slices.Equal(got.Roots, c.Roots) || !slices.Equal(got.CIDOffsets, c.CIDOffsets) {
		t.Fatal("loaded centroids differ from the written ones")
	}
	// A descriptor that disagrees with the tables is refused.
	bad := *cm
	bad.Descriptor.NList = 13
	if _, err := LoadTables(ctx, wh, &bad); !errors.Is(err, ErrMismatch) {
		t.Fatalf("nlist mismatch: %v", err)
	}
	// Locations that escape the warehouse are refused before any I/O.
	if _, err := ReadMeta(ctx, wh, "../outside.json"); err == nil {
		t.Fatal("escaping location accepted")
	}
}
