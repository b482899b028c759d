package reliability_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/internal/testfix"
	"github.com/parqdb/parqdb/lifecycle"
	"github.com/parqdb/parqdb/reliability"
	"github.com/parqdb/parqdb/storage"
)

// dim is the vector dimension of every test source.
const dim = 8

// partVectors returns the keys and vectors of a source part: n rows with
// keys first…first+n-1, around six cluster centres, from seed.
func partVectors(first int64, n int, seed uint64) ([]int64, [][]float32) {
	return testfix.ClusteredVectors(first, n, dim, seed, 7)
}

// writePart writes a source part to path atomically (testfix.WriteVectors),
// so that a concurrent reader of the folder never sees half a file.
func writePart(path string, first int64, n int, seed uint64) error {
	keys, vecs := partVectors(first, n, seed)
	return testfix.WriteVectors(path, keys, vecs, sourcetest.Options{})
}

// probe is the known-answer search of every test index: key 0 of the
// first part (first 0, seed 1).
func probe() reliability.Probe {
	_, vecs := partVectors(0, 1, 1)
	return reliability.Probe{KeyField: "id", Key: 0, Vector: vecs[0]}
}

// backend is where a harness keeps its warehouse and catalog, as the
// child processes see it (environment) and as the parent opens it.
type backend struct {
	name      string
	warehouse string // local folder or s3://bucket/prefix
	catalog   string // catalog.Open spec
	s3        *testenv.S3Server
}

// env returns the variables a child needs to open the backend.
func (b backend) env() []string {
	e := []string{childWarehouse + "=" + b.warehouse, childCatalog + "=" + b.catalog}
	if b.s3 != nil {
		e = append(e, childS3Endpoint+"="+b.s3.Endpoint, childS3Access+"="+b.s3.AccessKey,
			childS3Secret+"="+b.s3.SecretKey, childS3Region+"="+b.s3.Region)
	}
	return e
}

// localBackend is a local warehouse folder with the catalog spec cat
// ("" for SQLite in the folder).
func localBackend(t *testing.T, name, cat string) backend {
	return backend{name: name, warehouse: filepath.Join(t.TempDir(), "wh"), catalog: cat}
}

// s3Backend is a new bucket on the test S3 server with the warehouse
// catalog in it.
func s3Backend(t *testing.T, name string) backend {
	s := testenv.S3(t)
	return backend{name: name, warehouse: "s3://" + s.NewBucket(t) + "/wh", catalog: "warehouse", s3: s}
}

// openWarehouse opens a warehouse spec as the children do.
func openWarehouse(ctx context.Context, spec, endpoint, access, secret, region string) (storage.Bucket, error) {
	if rest, ok := strings.CutPrefix(spec, "s3://"); ok {
		bucket, prefix, _ := strings.Cut(rest, "/")
		return storage.NewS3(ctx, bucket, prefix, storage.S3Endpoint(endpoint),
			storage.S3Credentials(access, secret), storage.S3Region(region))
	}
	return storage.NewLocal(spec)
}

// open opens the backend in this process.
func (b backend) open(t *testing.T) reliability.Env {
	t.Helper()
	ctx := context.Background()
	var endpoint, access, secret, region string
	if b.s3 != nil {
		endpoint, access, secret, region = b.s3.Endpoint, b.s3.AccessKey, b.s3.SecretKey, b.s3.Region
	}
	wh, err := openWarehouse(ctx, b.warehouse, endpoint, access, secret, region)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(ctx, b.catalog, wh)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return reliability.Env{Warehouse: wh, Catalog: cat}
}

func buildEnv(e reliability.Env) indexer.Env {
	return indexer.Env{Warehouse: e.Warehouse, Catalog: e.Catalog}
}

func lifeEnv(e reliability.Env) lifecycle.Env {
	return lifecycle.Env{Warehouse: e.Warehouse, Catalog: e.Catalog}
}

// createOptions are the build options of every test index over src.
func createOptions(name, src string) indexer.Options {
	return indexer.Options{Name: name, Source: src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 8, Iterations: 5}
}

// newSource makes a source folder with the first part (600 rows).
func newSource(t *testing.T) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writePart(filepath.Join(src, "p000000.parquet"), 0, 600, 1); err != nil {
		t.Fatal(err)
	}
	return src
}

// collect runs gc with a grace period that every existing file has
// passed, then checks that no orphan is left and the index still checks.
// It returns the number of orphans left (each also fails the test).
func collect(t *testing.T, e reliability.Env, names ...string) int {
	t.Helper()
	ctx := context.Background()
	if _, err := lifecycle.GC(ctx, lifeEnv(e), lifecycle.GCOptions{
		Grace: time.Nanosecond, GraceSet: true, Now: func() time.Time { return time.Now().Add(time.Hour) },
	}); err != nil {
		t.Fatalf("gc: %v", err)
	}
	orphans, err := reliability.Orphans(ctx, e)
	if err != nil {
		t.Fatalf("orphans: %v", err)
	}
	if len(orphans) > 0 {
		t.Errorf("%v after gc: %v", reliability.ErrOrphan, orphans)
	}
	// Killed writers' unfinished writes (temporary files, multipart
	// uploads) are gone too.
	if lb, ok := e.Warehouse.(interface {
		ListLeftovers(ctx context.Context, prefix string) ([]storage.Leftover, error)
	}); ok {
		los, err := lb.ListLeftovers(ctx, "")
		if err != nil {
			t.Fatalf("leftovers: %v", err)
		}
		if len(los) > 0 {
			t.Errorf("unfinished writes after gc: %+v", los)
		}
	} else {
		t.Fatalf("warehouse %T cannot list unfinished writes", e.Warehouse)
	}
	for _, n := range names {
		if _, err := reliability.Check(ctx, e, n, probe()); err != nil {
			t.Fatalf("after gc: %v", err)
		}
	}
	return len(orphans)
}

// envInt reads a positive integer setting from the environment.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
