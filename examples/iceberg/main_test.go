package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/internal/icesource"
)

// TestWrite makes the GloVe sample an Iceberg table, as docs/iceberg.md
// shows, configures the catalog with the line the command prints, and
// reads the table back through the iceberg source provider: every row,
// the sample's columns. A second run into the same folder is refused.
func TestWrite(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "lake")
	out, err := write(ctx, "../glove/glove-10k.parquet", dir, "lake-test", "docs", "words")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^wrote 10000 rows of .* as (iceberg://lake-test/docs/words) \(snapshot \d+\)\nexport (PARQDB_ICEBERG_LAKE_TEST_URI)=(sqlite:.*)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("output:\n%s", out)
	}
	t.Setenv(m[2], m[3])
	tbl, _, err := icesource.Open(ctx, m[1], 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	if tbl.NumRows() != 10000 {
		t.Errorf("%s has %d rows, want 10000", m[1], tbl.NumRows())
	}
	var cols []string
	for _, f := range tbl.Schema().Fields() {
		cols = append(cols, f.Name())
	}
	if got := strings.Join(cols, ","); !strings.Contains(got, "word") || !strings.Contains(got, "embedding") {
		t.Errorf("columns %s, want the sample's", got)
	}
	if _, err := write(ctx, "../glove/glove-10k.parquet", dir, "lake-test", "docs", "words"); err == nil || !strings.Contains(err.Error(), "iceberg.db exists") {
		t.Errorf("a second run into %s: %v, want a refusal", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "warehouse")); err != nil {
		t.Error(err)
	}
}
