package indexer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestS3SourceAndWarehouse builds from a source folder on the real S3
// server into an S3 warehouse with the object-store catalog, refreshes it
// after an append (the successor's vectors file derived from the base's
// over ranged reads), and searches it; credentials come from the environment.
func TestS3SourceAndWarehouse(t *testing.T) {
	ctx := context.Background()
	srv := testenv.S3(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_REGION", srv.Region)
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
	srcBucket, whBucket := srv.NewBucket(t), srv.NewBucket(t)
	src, err := storage.Open(ctx, "s3://"+srcBucket)
	if err != nil {
		t.Fatal(err)
	}
	put := func(name string, first int64, n int, seed uint64) {
		p := filepath.Join(t.TempDir(), name)
		writePart(t, p, first, n, 8, seed)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := storage.WriteAll(ctx, src, "data/"+name, data); err != nil {
			t.Fatal(err)
		}
	}
	put("p0.parquet", 0, 1500, 1)
	wh, err := storage.Open(ctx, "s3://"+whBucket+"/wh")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(ctx, "warehouse", wh)
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Warehouse: wh, Catalog: cat}
	if _, err := Create(ctx, env, Options{Name: "v", Source: "s3://" + srcBucket + "/data/", VectorField: "embedding", KeyFields: []string{"id"}, NList: 12, VectorsFile: true}); err != nil {
		t.Fatal(err)
	}
	// An appended part that repeats indexed ids is refused; nothing moves.
	keys := func() []string {
		infos, err := wh.List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, in := range infos {
			out = append(out, in.Key)
		}
		return out
	}
	before, e0 := keys(), mustLoad(t, cat, "v")
	put("p1.parquet", 1450, 100, 2)
	_, err = Refresh(ctx, env, "v", RefreshOptions{})
	if !errors.Is(err, source.ErrDuplicateKey) || !strings.Contains(err.Error(), `p1.parquet": row 0 (key id=1450)`) ||
		!strings.Contains(err.Error(), `row 1450 of file`) || !strings.Contains(err.Error(), `which the index already holds`) {
		t.Fatalf("refresh over repeated ids: %v", err)
	}
	if after := keys(); !slices.Equal(after, before) {
		t.Fatalf("failed refresh changed the warehouse:\n%v\n%v", before, after)
	}
	if e1 := mustLoad(t, cat, "v"); e1.MetadataLocation != e0.MetadataLocation {
		t.Fatalf("failed refresh moved the catalog to %s", e1.MetadataLocation)
	}
	put("p1.parquet", 10000, 100, 2)
	r, err := Refresh(ctx, env, "v", RefreshOptions{})
	if err != nil || r.Action != ActionIncremental {
		t.Fatalf("refresh: %+v %v", r, err)
	}
	vectorsFileChecked(t, env, "v")
	ix, err := query.Open(ctx, query.Env{Warehouse: wh, Catalog: cat}, "v", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Snapshot().IndexedRows != 1600 {
		t.Fatalf("indexed rows %d", ix.Snapshot().IndexedRows)
	}
	vals, err := ix.ParseKey([]string{"10007"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ix.SearchNearKey(ctx, vals, query.Options{K: 3, NProbe: 12, Refine: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Hits[0].Row["id"]; got != int64(10007) || res.Hits[0].Distance != 0 {
		t.Fatalf("first hit %v at %v, want the row itself at 0", got, res.Hits[0].Distance)
	}
}

func mustLoad(t *testing.T, cat catalog.Catalog, name string) catalog.Entry {
	t.Helper()
	e, err := cat.Load(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
