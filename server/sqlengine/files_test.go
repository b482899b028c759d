//go:build duckdb

package sqlengine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/internal/testfix"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server/serving"
	"github.com/parqdb/parqdb/server/sqlengine"
	"github.com/parqdb/parqdb/storage"
)

// secret is the content of every file a statement must not read.
const secret = "parqdb-secret-3f9a"

// fileFixture is a warehouse with three indexes: f over the folder
// fdir/ (300 rows, one file at the top and one in sub/), F over the
// folder Fdir/ (500 rows) and words over the file wdir/g.parquet; beside
// each source and in a subfolder lie files that are no source's.
type fileFixture struct {
	root, fdir, Fdir, wdir, allowed string
	// outside are files no statement may read: beside a file source, in
	// a source folder, in its subfolder, a Parquet file beside a file
	// source and one in a source folder's hidden subfolder.
	besideFile, inFolder, inSub, parquetBeside, hiddenParquet string
	pool                                                      *serving.Pool
}

func newFileFixture(t *testing.T) *fileFixture {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	x := &fileFixture{root: root, fdir: filepath.Join(root, "fdir"), Fdir: filepath.Join(root, "Fdir"), wdir: filepath.Join(root, "wdir"), allowed: filepath.Join(root, "allowed")}
	for _, d := range []string{filepath.Join(x.fdir, "sub"), filepath.Join(x.fdir, "_tmp"), x.Fdir, x.wdir, x.allowed} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	testfix.WritePart(t, filepath.Join(x.fdir, "p0.parquet"), 0, 200, 8, 1, 1, sourcetest.Options{})
	testfix.WritePart(t, filepath.Join(x.fdir, "sub", "p1.parquet"), 200, 100, 8, 2, 1, sourcetest.Options{})
	testfix.WritePart(t, filepath.Join(x.Fdir, "p0.parquet"), 0, 500, 8, 3, 1, sourcetest.Options{})
	copyGlove(t, x.wdir, "g.parquet")
	x.besideFile = filepath.Join(x.wdir, "secret.txt")
	x.inFolder = filepath.Join(x.fdir, "secret.csv")
	x.inSub = filepath.Join(x.fdir, "sub", "secret.json")
	x.parquetBeside = filepath.Join(x.wdir, "other.parquet")
	x.hiddenParquet = filepath.Join(x.fdir, "_tmp", "p.parquet")
	for _, p := range []string{x.besideFile, x.inFolder, x.inSub} {
		body := "a\n" + secret + "\n"
		if strings.HasSuffix(p, ".json") {
			body = `{"a": "` + secret + `"}` + "\n"
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testfix.WritePart(t, x.parquetBeside, 0, 10, 8, 4, 1, sourcetest.Options{})
	testfix.WritePart(t, x.hiddenParquet, 0, 10, 8, 4, 1, sourcetest.Options{})
	if err := os.WriteFile(filepath.Join(x.allowed, "ok.csv"), []byte("a\n1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wh, err := storage.NewLocal(filepath.Join(root, "wh"))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.OpenSQLite(ctx, filepath.Join(root, "wh", "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	benv := indexer.Env{Warehouse: wh, Catalog: cat}
	for _, o := range []indexer.Options{
		{Name: "f", Source: x.fdir + "/", VectorField: "embedding", KeyFields: []string{"id"}, NList: 4},
		{Name: "F", Source: x.Fdir + "/", VectorField: "embedding", KeyFields: []string{"id"}, NList: 4},
		{Name: "words", Source: filepath.Join(x.wdir, "g.parquet"), VectorField: "embedding", KeyFields: []string{"word"}, Metric: "cosine", NList: 16},
	} {
		if _, err := indexer.Create(ctx, benv, o); err != nil {
			t.Fatal(err)
		}
	}
	x.pool = serving.NewPool(query.Env{Warehouse: wh, Catalog: cat}, serving.PoolOptions{RefreshInterval: -1})
	t.Cleanup(func() { x.pool.Close() })
	return x
}

func (x *fileFixture) engine(t *testing.T, opts sqlengine.Options) *sqlengine.Engine {
	t.Helper()
	e, err := sqlengine.New(x.pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestCaseDistinctIndexNames: indexes f and F (DuckDB's identifiers are
// case-insensitive) each read their own source through source('…'), and
// the identifier they share refuses, naming both, instead of answering
// with one of them; the other views are unchanged.
func TestCaseDistinctIndexNames(t *testing.T) {
	x := newFileFixture(t)
	for _, opts := range []sqlengine.Options{{}, {ExternalAccess: true}} {
		e := x.engine(t, opts)
		for stmt, want := range map[string]string{
			"SELECT count(*) AS n FROM source('f')":                                     "300",
			"SELECT count(*) AS n FROM source('F')":                                     "500",
			"SELECT count(*) AS n FROM words":                                           "10000",
			"SELECT count(*) AS n FROM source('words')":                                 "10000",
			"SELECT count(*) AS n FROM source('f') a JOIN source('F') b USING (id)":     "300",
			"SELECT count(*) AS n FROM (SELECT * FROM ivf_search_key('F', '400', 3)) s": "3",
		} {
			if _, got := rows(t, e, stmt); len(got) != 1 || got[0]["n"] != want {
				t.Errorf("external %v: %s: %v, want %s", opts.ExternalAccess, stmt, got, want)
			}
		}
		for _, stmt := range []string{`SELECT * FROM "F"`, `SELECT count(*) FROM f`, `SELECT count(*) FROM "f"`} {
			err := queryErr(e, stmt)
			if err == nil || !strings.Contains(err.Error(), "differ only in case") || !strings.Contains(err.Error(), "source('F')") {
				t.Errorf("external %v: %s: %v, want the ambiguity named", opts.ExternalAccess, stmt, err)
			}
		}
		for _, stmt := range []string{"SELECT * FROM source('WORDS')", "SELECT * FROM source('nope')", "SELECT * FROM source('main.words')"} {
			if err := queryErr(e, stmt); err == nil || !strings.Contains(err.Error(), "has no source view") {
				t.Errorf("external %v: %s: %v, want no such source view", opts.ExternalAccess, stmt, err)
			}
		}
	}
}

// TestSQLFileFunctions tries every DuckDB function that reads or writes
// files (and the replacement scans, COPY, ATTACH, INSTALL/LOAD and the
// temporary directory) against files beside a file source, in a source
// folder, in its subfolder, a Parquet file that is no source's and one in
// a hidden subfolder of a source folder: with external access off each is
// refused with a sql_error that does not show the file, while the
// sources' own Parquet files and the allowed directory read.
func TestSQLFileFunctions(t *testing.T) {
	x := newFileFixture(t)
	e := x.engine(t, sqlengine.Options{AllowedDirs: []string{x.allowed}})
	targets := []string{x.besideFile, x.inFolder, x.inSub, x.parquetBeside, x.hiddenParquet}
	fns := []string{
		"SELECT * FROM read_text(%s)", "SELECT * FROM read_blob(%s)",
		"SELECT * FROM read_csv(%s)", "SELECT * FROM read_csv_auto(%s)", "SELECT * FROM sniff_csv(%s)",
		"SELECT * FROM read_json(%s)", "SELECT * FROM read_json_auto(%s)", "SELECT * FROM read_ndjson(%s)",
		"SELECT * FROM read_json_objects(%s)", "SELECT * FROM read_ndjson_objects(%s)",
		"SELECT * FROM read_parquet(%s)", "SELECT * FROM parquet_scan(%s)",
		"SELECT * FROM parquet_metadata(%s)", "SELECT * FROM parquet_schema(%s)",
		"SELECT * FROM parquet_file_metadata(%s)", "SELECT * FROM parquet_kv_metadata(%s)",
		"SELECT * FROM glob(%s)", "SELECT * FROM %s",
		"COPY (SELECT 1) TO %s", "ATTACH %s", "SELECT * FROM query('SELECT * FROM read_text(' || %s || ')')",
	}
	var stmts []string
	for _, fn := range fns {
		for _, target := range targets {
			stmts = append(stmts, strings.Replace(fn, "%s", sqlString(target), 1))
		}
	}
	for _, d := range []string{x.fdir, x.wdir, filepath.Join(x.fdir, "sub")} {
		for _, pat := range []string{"/**", "/*", "/*.parquet", "/**/*.csv"} {
			stmts = append(stmts, "SELECT * FROM glob("+sqlString(d+pat)+")", "SELECT * FROM read_text("+sqlString(d+pat)+")")
		}
	}
	stmts = append(stmts,
		"SELECT * FROM read_text('.tmp/x')", "SELECT * FROM glob('.tmp/**')",
		"INSTALL httpfs", "LOAD httpfs", "LOAD "+sqlString(x.besideFile),
		"SELECT * FROM read_text("+sqlString(filepath.Join(x.fdir, "sub", "..", "secret.csv"))+")",
		"SELECT * FROM read_text("+sqlString(filepath.Join(x.allowed, "..", "fdir", "secret.csv"))+")",
	)
	failures := 0
	for _, stmt := range stmts {
		err := queryErr(e, stmt)
		var ae *serving.Error
		if !errors.As(err, &ae) || ae.Code != serving.CodeSQLError || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: %v, want a sql_error", stmt, err)
			failures++
		}
	}
	t.Logf("%d statements refused, %d failures", len(stmts)-failures, failures)
	for stmt, want := range map[string]string{
		"SELECT count(*) AS n FROM read_parquet(" + sqlString(filepath.Join(x.fdir, "sub", "p1.parquet")) + ")": "100",
		"SELECT count(*) AS n FROM parquet_metadata(" + sqlString(filepath.Join(x.wdir, "g.parquet")) + ")":     "",
		"SELECT count(*) AS n FROM read_csv(" + sqlString(filepath.Join(x.allowed, "ok.csv")) + ")":             "2",
		"SELECT count(*) AS n FROM source('f')":         "300",
		"SELECT current_setting('temp_directory') AS n": `""`,
	} {
		_, got := rows(t, e, stmt)
		if len(got) != 1 || want != "" && got[0]["n"] != want {
			t.Errorf("%s: %v, want %s", stmt, got, want)
		}
	}
	if ents, err := os.ReadDir(x.allowed); err != nil || len(ents) != 1 {
		t.Errorf("the allowed directory holds %v (%v), want only ok.csv", ents, err)
	}
}

// TestSQLMemoryLimit: a statement that needs more than Options.MemoryLimit
// fails with a sql_error that names the limit, nothing spills, and the
// engine keeps answering; the default is half the process cache budget.
func TestSQLMemoryLimit(t *testing.T) {
	x := newFileFixture(t)
	for _, opts := range []sqlengine.Options{{MemoryLimit: 64 << 20}, {MemoryLimit: 64 << 20, ExternalAccess: true}} {
		e := x.engine(t, opts)
		err := queryErr(e, "SELECT count(*) FROM (SELECT * FROM range(40000000) ORDER BY random())")
		var ae *serving.Error
		if !errors.As(err, &ae) || ae.Code != serving.CodeSQLError || !strings.Contains(ae.Message, "SQL memory limit of 64.0 MiB") {
			t.Errorf("external %v: memory-hungry statement: %v, want a sql_error naming the 64 MiB limit", opts.ExternalAccess, err)
		}
		if _, got := rows(t, e, "SELECT count(*) AS n FROM words"); got[0]["n"] != "10000" {
			t.Errorf("after the refused statement: %v", got)
		}
		if _, got := rows(t, e, "SELECT current_setting('memory_limit') AS m, current_setting('temp_directory') AS d"); got[0]["m"] != `"64.0 MiB"` || got[0]["d"] != `""` {
			t.Errorf("settings: %v", got)
		}
	}
	if _, err := sqlengine.New(x.pool, sqlengine.Options{MemoryLimit: 1 << 20}); err == nil || !strings.Contains(err.Error(), "minimum") {
		t.Errorf("MemoryLimit 1 MiB: %v, want refused", err)
	}
	e := x.engine(t, sqlengine.Options{})
	_, got := rows(t, e, "SELECT current_setting('memory_limit') AS m")
	t.Logf("default memory_limit %v (DefaultMemoryLimit %d)", got, sqlengine.DefaultMemoryLimit())
}
