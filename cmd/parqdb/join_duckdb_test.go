//go:build duckdb

package main

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

// TestJoinReadByDuckDB reads a join's output with DuckDB, a reader other
// than ParqDB's: before the commit a glob of the output folder finds no
// file (a sharded join with one of its two shards done); after it, the
// documented columns and types, one row per query and rank, no self-match.
func TestJoinReadByDuckDB(t *testing.T) {
	wh := gloveWarehouse(t)
	out := filepath.Join(t.TempDir(), "knn")
	args := []string{"--warehouse", wh, "join", "words", "--queries-table", gloveSample, "--query-key", "word", "--query-vector", "embedding",
		"-k", "5", "--self", "--output", out, "-q"}
	if o, e, code := runSplit(t, append(args, "--shards", "2")...); code != exitOK {
		t.Fatalf("plan: exit %d %s%s", code, o, e)
	}
	if o, e, code := runSplit(t, "--warehouse", wh, "join-shard", out, "--shard", "0", "-q"); code != exitOK {
		t.Fatalf("shard 0: exit %d %s%s", code, o, e)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	err = db.QueryRow("SELECT count(*) FROM read_parquet('" + out + "/*.parquet')").Scan(&n)
	if err == nil || !strings.Contains(err.Error(), "No files found") {
		t.Fatalf("before the commit DuckDB reads %d rows (%v), want no files", n, err)
	}
	if o, e, code := runSplit(t, "--warehouse", wh, "join-shard", out, "--shard", "1", "-q"); code != exitOK {
		t.Fatalf("shard 1: exit %d %s%s", code, o, e)
	}
	if o, e, code := runSplit(t, "--warehouse", wh, "join-commit", out, "-q"); code != exitOK {
		t.Fatalf("commit: exit %d %s%s", code, o, e)
	}
	rows, err := db.Query("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('" + out + "/*.parquet'))")
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, name+" "+typ)
	}
	rows.Close()
	if got := strings.Join(cols, ", "); got != "query_word VARCHAR, word VARCHAR, _distance FLOAT, _rank INTEGER" {
		t.Fatalf("columns %s", got)
	}
	var queries, self, lo, hi int64
	err = db.QueryRow("SELECT count(*), count(DISTINCT query_word), count(*) FILTER (WHERE query_word = word), min(_rank), max(_rank) FROM read_parquet('"+out+"/*.parquet')").
		Scan(&n, &queries, &self, &lo, &hi)
	if err != nil {
		t.Fatal(err)
	}
	if n != 50000 || queries != 10000 || self != 0 || lo != 1 || hi != 5 {
		t.Fatalf("%d rows, %d queries, %d self-matches, ranks %d…%d; want 50000, 10000, 0, 1…5", n, queries, self, lo, hi)
	}
}
