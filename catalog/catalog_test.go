package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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

// TestWarehouseStaleListing: a warehouse catalog with no memory of an index
// finds its current version even when the listing misses the newest
// versions, and one whose memory is far behind catches up.
func TestWarehouseStaleListing(t *testing.T) {
	ctx := context.Background()
	b := newMemBucket(3)
	w1 := catalog.NewWarehouse(b)
	entry := func(i int) catalog.Entry {
		return catalog.Entry{Name: "docs", MetadataLocation: fmt.Sprintf("metadata/m%d.json", i), Source: catalogtest.Source(i)}
	}
	if err := w1.Create(ctx, entry(0)); err != nil {
		t.Fatal(err)
	}
	w2 := catalog.NewWarehouse(b)
	if _, err := w2.Load(ctx, "docs"); err != nil { // w2 now remembers version 1
		t.Fatal(err)
	}
	for i := 1; i <= 12; i++ {
		if err := w1.Commit(ctx, entry(i-1).MetadataLocation, entry(i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(b.keys(catalog.WarehousePrefix)); got != 13 {
		t.Fatalf("%d version objects, want 13", got)
	}
	for _, w := range []*catalog.Warehouse{w2, catalog.NewWarehouse(b)} {
		e, err := w.Load(ctx, "docs")
		if err != nil || !reflect.DeepEqual(e, entry(12)) {
			t.Fatalf("Load = %+v, %v; want %+v", e, err, entry(12))
		}
		if err := w.Commit(ctx, entry(11).MetadataLocation, entry(99)); !errors.Is(err, catalog.ErrConflict) {
			t.Fatalf("stale Commit: %v, want ErrConflict", err)
		}
	}
	if err := catalog.NewWarehouse(b).Commit(ctx, entry(12).MetadataLocation, entry(13)); err != nil {
		t.Fatal(err)
	}
	if e, err := w1.Load(ctx, "docs"); err != nil || !reflect.DeepEqual(e, entry(13)) {
		t.Fatalf("Load = %+v, %v", e, err)
	}
}

// TestPostgresSecrets: the DSN password shows neither in String nor in
// errors, with the right password and with a wrong one.
func TestPostgresSecrets(t *testing.T) {
	ctx := context.Background()
	dsn := testenv.Postgres(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	pw, ok := u.User.Password()
	if !ok || pw == "" {
		t.Fatalf("test DSN has no password")
	}
	c, err := catalog.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if strings.Contains(c.String(), pw) || !strings.HasPrefix(c.String(), "postgres://") {
		t.Fatalf("String() = %q", c.String())
	}
	_, err = c.Load(ctx, "missing")
	if err == nil || strings.Contains(err.Error(), pw) {
		t.Fatalf("Load error = %v", err)
	}
	wrong := strings.Replace(dsn, ":"+pw+"@", ":wrong-"+pw+"@", 1)
	if c2, err := catalog.Open(ctx, wrong, nil); err == nil {
		c2.Close()
		t.Fatal("Open with a wrong password succeeded")
	} else if strings.Contains(err.Error(), pw) {
		t.Fatalf("error shows the password: %v", err)
	} else {
		t.Logf("wrong password: %v", err)
	}
}
