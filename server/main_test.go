package server_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const glove = "../examples/glove/glove-10k.parquet"

// newLocalEnv is a fresh local warehouse with a SQLite catalog.
func newLocalEnv(t testing.TB) query.Env {
	t.Helper()
	dir := t.TempDir()
	wh, err := storage.NewLocal(filepath.Join(dir, "wh"))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.OpenSQLite(context.Background(), filepath.Join(dir, "wh", "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return query.Env{Warehouse: wh, Catalog: cat}
}

// buildGlove indexes the GloVe sample as name.
func buildGlove(t testing.TB, env query.Env, name, encoding string) {
	t.Helper()
	abs, err := filepath.Abs(glove)
	if err != nil {
		t.Fatal(err)
	}
	_, err = indexer.Create(context.Background(), indexer.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, indexer.Options{
		Name: name, Source: abs, VectorField: "embedding", KeyFields: []string{"word"},
		Metric: metadata.MetricCosine, Encoding: encoding, NList: 64,
	})
	if err != nil {
		t.Fatal(err)
	}
}

// commitSuccessor publishes a new snapshot of index name that
// republishes its current tables (the profile keeps an index's tables in
// its own folder, so another index's tables cannot be borrowed): what a
// refresh commits, without the build. It returns the new snapshot id.
func commitSuccessor(t *testing.T, env query.Env, name string) int64 {
	t.Helper()
	ctx := context.Background()
	next, _, err := catalog.Update(ctx, env.Catalog, env.Warehouse, name, func(base *metadata.Metadata, _ catalog.Entry) (*metadata.Metadata, *catalog.Entry, error) {
		m, err := metadata.Successor(base, *base.CurrentSnapshot(), time.Now().UnixMilli())
		return m, nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return next.CurrentSnapshotID
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
