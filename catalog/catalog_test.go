package catalog_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/catalog/catalogtest"
	"github.com/parqdb/parqdb/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

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

func TestConformance(t *testing.T) {
	kinds := []struct {
		name string
		new  func(t *testing.T) catalog.Catalog
	}{
		{"SQLite", newSQLite},
		{"PostgreSQL", newPostgres},
		{"WarehouseMemory", func(t *testing.T) catalog.Catalog { return catalog.NewWarehouse(newMemBucket(0)) }},
		// A listing that misses the 3 newest objects must not change any outcome.
		{"WarehouseLaggingList", func(t *testing.T) catalog.Catalog { return catalog.NewWarehouse(newMemBucket(3)) }},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) { catalogtest.Run(t, k.new) })
	}
}
