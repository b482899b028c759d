package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parqdb/parqdb/catalog"
)

// TestGCUnfinishedWrites leaves a killed writer's temporary file in the
// warehouse: `gc --dry-run` lists it once it is older than the grace
// period and `gc` removes it.
func TestGCUnfinishedWrites(t *testing.T) {
	wh := gloveWarehouse(t)
	tmp := filepath.Join(wh, "indexes", ".parqdb-tmp:0123456789abcdef")
	if err := os.WriteFile(tmp, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := runSplit(t, "--warehouse", wh, "gc", "--dry-run")
	if code != exitOK || strings.Contains(out, "unfinished write indexes/") || !strings.Contains(out, "1 unfinished write(s)\n") {
		t.Fatalf("gc --dry-run within the grace period: exit %d\n%s", code, out)
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	out, _, code = runSplit(t, "--warehouse", wh, "gc", "--dry-run")
	if code != exitOK || !strings.Contains(out, "unfinished write indexes/.parqdb-tmp:0123456789abcdef") {
		t.Fatalf("gc --dry-run: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("dry run removed the file: %v", err)
	}
	out, _, code = runSplit(t, "--warehouse", wh, "gc")
	if code != exitOK || !strings.Contains(out, "removed unfinished write indexes/.parqdb-tmp:0123456789abcdef") {
		t.Fatalf("gc: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatalf("gc left the file: %v", err)
	}
}

// TestGCBadCatalogRow: a catalog row whose name breaks the rules is a
// problem gc reports (exit 1, naming the row), not a usage error (exit 2).
func TestGCBadCatalogRow(t *testing.T) {
	wh := gloveWarehouse(t)
	db, err := sql.Open("sqlite", filepath.Join(wh, "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO ` + catalog.Table + ` SELECT 'Bad Name', metadata_location, source_table, updated_at_ms FROM ` + catalog.Table); err != nil {
		t.Fatal(err)
	}
	_, errs, code := runSplit(t, "--warehouse", wh, "gc", "--dry-run")
	if code != exitProblem || !strings.Contains(errs, `catalog entry "Bad Name"`) || !strings.Contains(errs, "nothing was deleted") {
		t.Fatalf("gc: exit %d, want %d\n%s", code, exitProblem, errs)
	}
}

// TestDropPurgeKeepsSharedFiles: two catalog rows point at one metadata
// file; `index drop --purge` of one keeps what the other uses, which then
// still searches.
func TestDropPurgeKeepsSharedFiles(t *testing.T) {
	wh := gloveWarehouse(t)
	db, err := sql.Open("sqlite", filepath.Join(wh, "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO ` + catalog.Table + ` SELECT 'twin', metadata_location, source_table, updated_at_ms FROM ` + catalog.Table); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runSplit(t, "--warehouse", wh, "index", "drop", "words", "--purge")
	if code != exitOK || !strings.Contains(out, "that another catalog entry references") {
		t.Fatalf("drop --purge: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = runSplit(t, "--warehouse", wh, "search", "twin", "--near-key", "king", "-k", "3", "--columns", "word")
	if code != exitOK || !strings.Contains(out, "king") {
		t.Fatalf("search twin after purging words: exit %d\n%s%s", code, out, errs)
	}
}

// TestEmptyCatalogFileRefused: a catalog.db truncated to 0 bytes would
// open as an empty catalog, and gc past the grace period would then take
// every index file for an orphan. Read commands and gc refuse it instead.
func TestEmptyCatalogFileRefused(t *testing.T) {
	wh := gloveWarehouse(t)
	if err := os.Truncate(filepath.Join(wh, "catalog.db"), 0); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadDir(filepath.Join(wh, "indexes"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"gc", "--grace", "1ns"}, {"index", "list"}, {"search", "words", "--near-key", "king"}} {
		_, errs, code := runSplit(t, append([]string{"--warehouse", wh}, args...)...)
		if code != exitProblem || !strings.Contains(errs, "catalog.db is empty (0 bytes)") {
			t.Errorf("%v: exit %d, want %d naming the empty catalog\n%s", args, code, exitProblem, errs)
		}
	}
	after, err := os.ReadDir(filepath.Join(wh, "indexes"))
	if err != nil || len(after) != len(before) {
		t.Fatalf("index folders before %d, after %d (%v)", len(before), len(after), err)
	}
}
