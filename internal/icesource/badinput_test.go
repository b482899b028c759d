package icesource_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/icesource"
	"github.com/parqdb/parqdb/internal/icesource/icetest"
)

// TestIcebergBadInput: every bad reference, field or table is a clear error
// that names what is wrong, and nothing is committed or written.
func TestIcebergBadInput(t *testing.T) {
	ctx := context.Background()
	l := icetest.NewLake(t, "lake", "sqlite", "local")
	l.Create("items", iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "title", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "embedding", Required: true,
			Type: &iceberg.ListType{ElementID: 4, Element: iceberg.PrimitiveTypes.Float32, ElementRequired: true}},
		iceberg.NestedField{ID: 5, Name: "blob", Type: iceberg.PrimitiveTypes.Binary},
	), nil)
	l.AppendRows(icetest.IDs(0, 200))
	// A second table with a position delete (merge-on-read).
	good := l.Ident
	l.Create("deleted", icetest.DocsSchema(), iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead})
	l.AppendRows(icetest.IDs(0, 200))
	l.DeleteWhere(iceberg.EqualTo(iceberg.Reference("id"), int64(7)))
	// A table with an equality delete (format v2), written by iceberg-go.
	l.Create("eqdeleted", icetest.DocsSchema(), nil)
	l.AppendRows(icetest.IDs(0, 200))
	l.EqualityDelete([]int64{3, 4})
	if n := len(l.Live()); n != 198 {
		t.Fatalf("equality delete left %d rows, want 198", n)
	}
	// A table whose position delete file is gone from storage.
	l.Create("lostdelete", icetest.DocsSchema(), iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead})
	l.AppendRows(icetest.IDs(0, 200))
	l.DeleteWhere(iceberg.EqualTo(iceberg.Reference("id"), int64(7)))
	tasks, err := l.Tbl.Scan().PlanFiles(ctx)
	if err != nil || len(tasks) != 1 || len(tasks[0].DeleteFiles) != 1 {
		t.Fatalf("lostdelete: %d tasks, %v", len(tasks), err)
	}
	lost := tasks[0].DeleteFiles[0].FilePath()
	if err := os.Remove(strings.TrimPrefix(lost, "file://")); err != nil {
		t.Fatal(err)
	}
	// A table with an ORC position delete file (committed through
	// iceberg-go's RowDelta; ParqDB reads only Parquet delete files).
	l.Create("orcdelete", icetest.DocsSchema(), nil)
	l.AppendRows(icetest.IDs(0, 200))
	orc := strings.TrimSuffix(l.Tbl.Location(), "/") + "/data/deletes-00000.orc"
	dfb, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentPosDeletes, orc, iceberg.OrcFile, nil, nil, nil, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	tx := l.Tbl.NewTransaction()
	if err := tx.NewRowDelta(nil).AddDeletes(dfb.Build()).Commit(ctx); err != nil {
		t.Fatalf("commit an ORC delete file: %v", err)
	}
	if l.Tbl, err = tx.Commit(ctx); err != nil {
		t.Fatalf("commit an ORC delete file: %v", err)
	}
	// A table without any snapshot.
	l.Create("empty", icetest.DocsSchema(), nil)
	l.Ident = good
	t.Setenv("PARQDB_ICEBERG_OTHER_URI", os.Getenv("PARQDB_ICEBERG_LAKE_URI"))
	ghost := filepath.Join(t.TempDir(), "ghost.db")
	t.Setenv("PARQDB_ICEBERG_GHOST_URI", "sqlite:"+ghost)
	defer func() {
		if _, err := os.Stat(ghost); err == nil {
			t.Error("opening a missing SQLite catalog created its file")
		}
	}()

	for _, c := range []struct {
		name, source, vector string
		keys                 []string
		err                  error
		says                 []string
	}{
		{"malformed reference", "iceberg://lake/items", "embedding", []string{"id"}, icesource.ErrRef, []string{"iceberg://<catalog>/<namespace>/<table>"}},
		{"unknown catalog", "iceberg://nowhere/docs/items", "embedding", []string{"id"}, icesource.ErrCatalog, []string{`"nowhere" is not configured`, "PARQDB_ICEBERG_NOWHERE_URI"}},
		{"missing catalog database", "iceberg://ghost/docs/items", "embedding", []string{"id"}, icesource.ErrCatalog, []string{"ghost.db"}},
		{"unknown namespace", "iceberg://lake/nope/items", "embedding", []string{"id"}, icesource.ErrNotFound, []string{`no namespace "nope"`, "its namespaces: docs"}},
		// The database of catalog "lake" configured under another name: the
		// SQL catalog keeps its rows under "lake".
		{"catalog name not the stored one", "iceberg://other/docs/items", "embedding", []string{"id"}, icesource.ErrNotFound,
			[]string{`no namespace "docs"`, `no catalog named "other", only "lake"`, "iceberg://lake/docs/items", "PARQDB_ICEBERG_LAKE_URI"}},
		{"unknown table", "iceberg://lake/docs/nope", "embedding", []string{"id"}, icesource.ErrNotFound, []string{`no table "nope"`}},
		{"table without snapshot", "iceberg://lake/docs/empty", "embedding", []string{"id"}, icesource.ErrNotFound, []string{"no snapshot"}},
		{"ORC delete file", "iceberg://lake/docs/orcdelete", "embedding", []string{"id"}, icesource.ErrUnsupported, []string{"delete file " + orc, "is ORC; only Parquet delete files are read"}},
		{"missing delete file", "iceberg://lake/docs/lostdelete", "embedding", []string{"id"}, nil, []string{"delete file " + lost}},
		{"missing vector column", "iceberg://lake/docs/items", "vec", []string{"id"}, nil, []string{`"vec"`}},
		{"binary vector column", "iceberg://lake/docs/items", "blob", []string{"id"}, nil, []string{`"blob"`}},
		{"missing key column", "iceberg://lake/docs/items", "embedding", []string{"doc_id"}, nil, []string{`"doc_id"`}},
		{"vector field as key", "iceberg://lake/docs/items", "embedding", []string{"embedding"}, nil, []string{`"embedding"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := parqdb(t)
			_, err := indexer.Create(ctx, env, indexer.Options{Name: "docs", Source: c.source, VectorField: c.vector, KeyFields: c.keys, NList: 4})
			if err == nil {
				t.Fatal("no error")
			}
			t.Logf("%v", err)
			if c.err != nil && !errors.Is(err, c.err) {
				t.Fatalf("error %v does not wrap %v", err, c.err)
			}
			for _, s := range c.says {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("error %q does not say %q", err, s)
				}
			}
			if names, lerr := env.Catalog.List(ctx); lerr != nil || len(names) != 0 {
				t.Fatalf("catalog after a failed create: %v %v", names, lerr)
			}
			if objs, lerr := env.Warehouse.List(ctx, "indexes/"); lerr != nil || len(objs) != 0 {
				t.Fatalf("warehouse after a failed create: %d objects, %v", len(objs), lerr)
			}
		})
	}
	// Row-level deletes are applied, not refused: the deleted rows are not
	// indexed.
	for _, c := range []struct {
		table string
		rows  int64
	}{{"deleted", 199}, {"eqdeleted", 198}} {
		env := parqdb(t)
		r, err := indexer.Create(ctx, env, indexer.Options{Name: "docs", Source: "iceberg://lake/docs/" + c.table, VectorField: "embedding", KeyFields: []string{"id"}, NList: 4})
		if err != nil {
			t.Fatalf("%s: %v", c.table, err)
		}
		if r.Rows != c.rows {
			t.Fatalf("%s: indexed %d rows, want %d", c.table, r.Rows, c.rows)
		}
	}
}

// TestParseRef: references and their canonical form.
func TestParseRef(t *testing.T) {
	for _, c := range []struct {
		in, canon string
		ns        []string
		ok        bool
	}{
		{"iceberg://lake/docs/items", "iceberg://lake/docs/items", []string{"docs"}, true},
		{"iceberg://lake/a/b/items/", "iceberg://lake/a/b/items", []string{"a", "b"}, true},
		{"iceberg://lake/items", "", nil, false},
		{"iceberg://la ke/docs/items", "", nil, false},
		{"iceberg://lake//items", "", nil, false},
		{"iceberg://lake/docs/it%20ems", "", nil, false},
		{"s3://lake/docs/items", "", nil, false},
	} {
		r, err := icesource.ParseRef(c.in)
		if (err == nil) != c.ok {
			t.Errorf("ParseRef(%q): %v", c.in, err)
			continue
		}
		if err != nil {
			if !errors.Is(err, icesource.ErrRef) || !strings.Contains(err.Error(), c.in) {
				t.Errorf("ParseRef(%q): error %v does not wrap ErrRef and quote the input", c.in, err)
			}
			continue
		}
		if r.String() != c.canon || strings.Join(r.Namespace, "/") != strings.Join(c.ns, "/") {
			t.Errorf("ParseRef(%q) = %+v (%s)", c.in, r, r)
		}
	}
}

// TestCheckProperties: the properties of an iceberg source-table.
func TestCheckProperties(t *testing.T) {
	good := func() map[string]string {
		return map[string]string{
			"definition-version": "1",
			"location":           "iceberg://lake/docs/items",
			"table-uuid":         "0b0d4a1e-8a4f-4f0e-9b7e-3c2d1e0f9a8b",
			"snapshot-id":        "4242",
			"table-identity":     "sha256:" + strings.Repeat("ab", 32),
		}
	}
	if err := icesource.CheckProperties(good()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ key, value, says string }{
		{"definition-version", "2", "definition-version"},
		{"location", "iceberg://lake/items", "location"},
		{"location", "iceberg://lake/docs/items/", "not canonical"},
		{"table-uuid", "0B0D4A1E-8A4F-4F0E-9B7E-3C2D1E0F9A8B", "table-uuid"},
		{"snapshot-id", "0", "snapshot-id"},
		{"snapshot-id", "042", "snapshot-id"},
		{"table-identity", "sha256:AB", "table-identity"},
		{"uri", "postgres://u:secret@db/x", `unknown property "uri"`},
	} {
		p := good()
		p[c.key] = c.value
		err := icesource.CheckProperties(p)
		if !errors.Is(err, icesource.ErrProperties) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s=%q: %v (want an error saying %q)", c.key, c.value, err, c.says)
		}
	}
}
