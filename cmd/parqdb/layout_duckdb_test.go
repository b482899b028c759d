//go:build duckdb

package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/internal/testfix"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

// TestTablesReadByDuckDB: DuckDB, reading an index table's location as a
// table (read_parquet('<location>*.parquet') and '<location>**/*.parquet'),
// gets exactly the table the profile defines: for ivf_postings of every
// encoding, built in one process (with the key-rows table, a vectors file
// and a calibration file beside it), sharded (one shard run twice) or by
// an incremental refresh, N rows (the rows the snapshot wrote, for the
// refresh) with exactly the postings columns, the manifest's CIDs; for
// ivf_centroids and ivf_roots, C and R rows. No side object is read.
func TestTablesReadByDuckDB(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w := testfix.NewWarehouse(t, filepath.Join(dir, "wh"))
	env := indexer.Env{Warehouse: w.Bucket, Catalog: w.Catalog}
	src := filepath.Join(dir, "src") + "/"
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		testfix.WritePart(t, filepath.Join(src, fmt.Sprintf("part-%d.parquet", i)), int64(i*500), 500, 12, 3, uint64(i), sourcetest.Options{})
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	type table struct {
		name, loc string
		rows      int64
		cols      []string
		cids      int64 // distinct cids, for postings
	}
	var tables []table
	postingsOf := func(name string, rows int64) {
		t.Helper()
		m, _, err := catalog.LoadMetadata(ctx, w.Catalog, w.Bucket, name)
		if err != nil {
			t.Fatal(err)
		}
		s := m.CurrentSnapshot()
		lay := postings.SnapshotLayout(s)
		if s.IndexTables[metadata.RolePostings].DefinitionVersion != postings.PostingsVersion || lay.Meta == lay.Table {
			t.Fatalf("%s: postings definition %+v", name, s.IndexTables[metadata.RolePostings])
		}
		data, err := storage.ReadAll(ctx, w.Bucket, lay.Manifest())
		if err != nil {
			t.Fatal(err)
		}
		man, err := postings.ParseManifest(data)
		if err != nil {
			t.Fatal(err)
		}
		cols := []string{"cid", "key_1"}
		if man.Encoding != "source" {
			cols = append(cols, "offset", "scale", "code")
		}
		cids := map[int32]bool{}
		for _, rg := range man.RowGroups {
			if strings.HasPrefix(man.Files[rg.File].Path, lay.Table) {
				cids[rg.CID] = true
			}
		}
		tables = append(tables, table{name + " ivf_postings", lay.Table, rows, cols, int64(len(cids))})
		cm := s.Parameters[metadata.ParamCentroidsLocation]
		raw, err := storage.ReadAll(ctx, w.Bucket, cm)
		if err != nil {
			t.Fatal(err)
		}
		c, err := metadata.ParseCentroidFile(cm, raw)
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables,
			table{name + " ivf_centroids", c.Centroids, int64(man.NList), nil, 0},
			table{name + " ivf_roots", c.Roots, -1, nil, 0})
	}
	for _, enc := range []string{"lvq8", "lvq4", "source"} {
		name := "one-" + enc
		if _, err := indexer.Create(ctx, env, indexer.Options{Name: name, Source: src, VectorField: "embedding",
			KeyFields: []string{"id"}, NList: 24, Encoding: enc, VectorsFile: true}); err != nil {
			t.Fatal(err)
		}
		qenv := query.Env{Warehouse: w.Bucket, Catalog: w.Catalog}
		ix, err := query.Open(ctx, qenv, name, query.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Recalibrate(ctx); err != nil { // a calibration file beside the table
			t.Fatal(err)
		}
		ix.Close()
		postingsOf(name, 1500)
	}
	// Sharded, shard 0 run twice: the replaced attempt's pieces are gone.
	pr, err := indexer.Plan(ctx, env, indexer.Options{Name: "sharded", Source: src, VectorField: "embedding",
		KeyFields: []string{"id"}, NList: 24}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 1, 2, 0} {
		if _, err := indexer.BuildShard(ctx, env, pr.Location, i, indexer.ShardOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := indexer.CommitPlan(ctx, env, pr.Location, indexer.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	postingsOf("sharded", 1500)
	// An incremental refresh: its location holds the rows it added.
	testfix.WritePart(t, filepath.Join(src, "part-3.parquet"), 1500, 200, 12, 3, 3, sourcetest.Options{})
	if r, err := indexer.Refresh(ctx, env, "one-lvq8", indexer.RefreshOptions{}); err != nil || r.Action != indexer.ActionIncremental {
		t.Fatalf("refresh: %+v, %v", r, err)
	}
	postingsOf("one-lvq8", 200)

	for _, tb := range tables {
		folder := filepath.Join(w.Dir, filepath.FromSlash(tb.loc))
		for _, glob := range []string{"*.parquet", "**/*.parquet"} {
			pattern := strings.ReplaceAll(folder+"/"+glob, "'", "''")
			var n int64
			if err := db.QueryRow(fmt.Sprintf("SELECT count(*) FROM read_parquet('%s')", pattern)).Scan(&n); err != nil {
				t.Fatalf("%s %s: %v", tb.name, glob, err)
			}
			if tb.rows >= 0 && n != tb.rows {
				t.Fatalf("%s %s: %d rows, want %d", tb.name, glob, n, tb.rows)
			}
			if tb.cols == nil {
				continue
			}
			rows, err := db.Query(fmt.Sprintf("SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet('%s'))", pattern))
			if err != nil {
				t.Fatalf("%s %s: %v", tb.name, glob, err)
			}
			var cols []string
			for rows.Next() {
				var c string
				if err := rows.Scan(&c); err != nil {
					t.Fatal(err)
				}
				cols = append(cols, c)
			}
			rows.Close()
			if !slices.Equal(cols, tb.cols) {
				t.Fatalf("%s %s: columns %v, want %v", tb.name, glob, cols, tb.cols)
			}
			var cids int64
			if err := db.QueryRow(fmt.Sprintf("SELECT count(DISTINCT cid) FROM read_parquet('%s')", pattern)).Scan(&cids); err != nil {
				t.Fatalf("%s %s: %v", tb.name, glob, err)
			}
			if cids != tb.cids {
				t.Fatalf("%s %s: %d distinct cids, the manifest %d", tb.name, glob, cids, tb.cids)
			}
		}
		// Nothing but Parquet data files in the location.
		err := filepath.WalkDir(folder, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && filepath.Ext(p) != ".parquet" {
				return fmt.Errorf("%s holds %s", tb.name, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
