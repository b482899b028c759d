package catalog_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/catalog/catalogtest"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/storage"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	testenv.Main(m)
}

func newSQLite(t *testing.T) catalog.Catalog {
	c, err := catalog.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newPostgres(t *testing.T) catalog.Catalog {
	c, err := catalog.OpenPostgres(context.Background(), testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newLocal(t testing.TB) *storage.Local {
	b, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newS3 returns a new, empty bucket on the test S3 server.
func newS3(t testing.TB) storage.Bucket {
	srv := testenv.S3(t)
	b, err := storage.NewS3(context.Background(), srv.NewBucket(t), "wh",
		storage.S3Endpoint(srv.Endpoint), storage.S3Region(srv.Region),
		storage.S3Credentials(srv.AccessKey, srv.SecretKey))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestConformance(t *testing.T) {
	kinds := []struct {
		name string
		new  func(t *testing.T) catalog.Catalog
	}{
		{"SQLite", newSQLite},
		{"PostgreSQL", newPostgres},
		{"WarehouseLocal", func(t *testing.T) catalog.Catalog { return catalog.NewWarehouse(newLocal(t)) }},
		{"WarehouseS3", func(t *testing.T) catalog.Catalog { return catalog.NewWarehouse(newS3(t)) }},
		{"WarehouseMemory", func(t *testing.T) catalog.Catalog { return catalog.NewWarehouse(newMemBucket(0)) }},
		// A listing that misses the 3 newest objects must not change any outcome.
		{"WarehouseLaggingList", func(t *testing.T) catalog.Catalog { return catalog.NewWarehouse(newMemBucket(3)) }},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) { catalogtest.Run(t, k.new) })
	}
}
