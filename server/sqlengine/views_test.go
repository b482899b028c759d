//go:build duckdb

package sqlengine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/server/serving"
	"github.com/parqdb/parqdb/server/sqlengine"
)

// copyGlove copies the example source into dir as name and returns its path.
func copyGlove(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../examples/glove/glove-10k.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSourceViewsAndAllowList: with external access off (the server),
// each index has a read-only view of its source, listed by SHOW TABLES
// and information_schema, readable as words or source('words') and
// joinable with ivf_search; files in an allowed directory read, and
// every other file, including one in a sibling directory whose name the
// allowed one prefixes, is refused; nothing writes, not even into an
// allowed directory (DuckDB's allowed_directories let COPY … TO through).
func TestSourceViewsAndAllowList(t *testing.T) {
	root := t.TempDir()
	allowed := filepath.Join(root, "data")
	inside := copyGlove(t, allowed, "g.parquet")
	outside := copyGlove(t, filepath.Join(root, "data2"), "g.parquet")
	e, _ := newEngineWith(t, sqlengine.Options{AllowedDirs: []string{allowed}})

	_, got := rows(t, e, "SHOW TABLES")
	if len(got) != 1 || got[0]["name"] != `"words"` {
		t.Errorf("SHOW TABLES: %v", got)
	}
	_, got = rows(t, e, "SELECT table_name, table_type FROM information_schema.tables")
	if len(got) != 1 || got[0]["table_name"] != `"words"` || got[0]["table_type"] != `"VIEW"` {
		t.Errorf("information_schema.tables: %v", got)
	}
	_, got = rows(t, e, "DESCRIBE words")
	var cols []string
	for _, r := range got {
		cols = append(cols, strings.Trim(r["column_name"].(string), `"`))
	}
	if strings.Join(cols, ",") != "word,rank,embedding" {
		t.Errorf("DESCRIBE words: columns %v", cols)
	}
	for _, stmt := range []string{
		"SELECT count(*) AS n FROM words",
		"SELECT count(*) AS n FROM source('words')",
		"SELECT count(*) AS n FROM read_parquet(" + sqlString(inside) + ")",
	} {
		if _, got := rows(t, e, stmt); got[0]["n"] != "10000" {
			t.Errorf("%s: %v", stmt, got)
		}
	}
	// The join: each hit with its source row's rank, by key.
	_, got = rows(t, e, `SELECT r.word, s.rank, r.rank AS hit_rank FROM ivf_search_key('words', 'king', 5) r
		JOIN source('words') s USING (word) ORDER BY r._distance`)
	if len(got) != 5 || got[0]["word"] != `"king"` {
		t.Fatalf("join: %v", got)
	}
	for _, r := range got {
		if r["rank"] != r["hit_rank"] {
			t.Errorf("join row %v: source rank differs", r)
		}
	}
	for _, stmt := range []string{
		"SELECT * FROM read_parquet(" + sqlString(outside) + ")",
		"SELECT * FROM read_csv('/etc/passwd')",
		"COPY (SELECT 1) TO " + sqlString(filepath.Join(root, "x.csv")),
		"SET allowed_directories = ['/']",
		"SET enable_external_access = true",
		"ATTACH " + sqlString(filepath.Join(root, "x.db")),
		// Writing is refused even where reading is allowed.
		"COPY (SELECT 1 AS x) TO " + sqlString(filepath.Join(allowed, "x.csv")),
		"COPY (SELECT 1 AS x) TO " + sqlString(inside),
		"SELECT 1; COPY (SELECT 1 AS x) TO " + sqlString(filepath.Join(allowed, "y.csv")),
		"SELECT * FROM query('COPY (SELECT 1 AS x) TO ''" + filepath.Join(allowed, "z.csv") + "''')",
		"EXPORT DATABASE " + sqlString(filepath.Join(allowed, "db")),
	} {
		err := queryErr(e, stmt)
		var ae *serving.Error
		if !errors.As(err, &ae) || ae.Code != serving.CodeSQLError {
			t.Errorf("%s: %v, want a sql_error", stmt, err)
		}
		// Flight SQL's prepared statements run through QueryArgs: the
		// same refusal there (it wrote into the allowed directory when
		// QueryArgs skipped the read-only check).
		rr, err := e.QueryArgs(context.Background(), stmt, nil)
		if err == nil {
			for rr.Next() {
			}
			err = rr.Err()
			rr.Release()
		}
		if !errors.As(err, &ae) || ae.Code != serving.CodeSQLError {
			t.Errorf("prepared %s: %v, want a sql_error", stmt, err)
		}
	}
	if ents, err := os.ReadDir(allowed); err != nil || len(ents) != 1 {
		t.Errorf("the allowed directory holds %v (%v), want only g.parquet", ents, err)
	}
	if _, got := rows(t, e, "SELECT count(*) AS n FROM read_parquet("+sqlString(inside)+")"); got[0]["n"] != "10000" {
		t.Errorf("g.parquet after the refused writes: %v", got)
	}
	for _, stmt := range []string{"SUMMARIZE words", "FROM words LIMIT 1", "WITH a AS (SELECT 1 AS x) SELECT * FROM a"} {
		if err := queryErr(e, stmt); err != nil {
			t.Errorf("%s: %v", stmt, err)
		}
	}
	if err := queryErr(e, "SELECT * FROM source('nope')"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("source('nope'): %v", err)
	}
}

// TestExternalAccess: the local engine (parqdb sql) reads any file, so
// search results join with read_parquet.
func TestExternalAccess(t *testing.T) {
	other := copyGlove(t, t.TempDir(), "other.parquet")
	e, _ := newEngineWith(t, sqlengine.Options{ExternalAccess: true})
	_, got := rows(t, e, `SELECT r.word, p.rank FROM ivf_search_key('words', 'king', 3) r
		JOIN read_parquet(`+sqlString(other)+`) p ON p.word = r.word ORDER BY r._distance`)
	if len(got) != 3 || got[0]["word"] != `"king"` || got[0]["rank"] == "null" {
		t.Fatalf("join with read_parquet: %v", got)
	}
}

// TestDescribeSearch: DESCRIBE gives the result schema of a search.
func TestDescribeSearch(t *testing.T) {
	e, _ := newEngine(t)
	for _, stmt := range []string{
		"DESCRIBE FROM ivf_search_key('words', 'king', 3, columns := ['word'])",
		"DESCRIBE SELECT * FROM ivf_search_key('words', 'king', 3, columns := ['word'])",
	} {
		_, got := rows(t, e, stmt)
		var desc []string
		for _, r := range got {
			desc = append(desc, strings.Trim(r["column_name"].(string), `"`)+" "+strings.Trim(r["column_type"].(string), `"`))
		}
		if strings.Join(desc, ", ") != "word VARCHAR, _distance FLOAT" {
			t.Errorf("%s: %v", stmt, desc)
		}
	}
}

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
