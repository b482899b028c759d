//go:build !noiceberg

package main

import (
	"strings"
	"testing"

	"github.com/parqdb/parqdb/internal/icesource/icetest"
)

// TestIcebergCLI runs the commands of docs/iceberg.md's guide on a real
// Iceberg table (iceberg-go SQL catalog on SQLite, configured through
// PARQDB_ICEBERG_LAKE_URI): create, search, describe, verify, and after an
// append: verify reports the index stale, refresh is incremental, verify
// passes again.
func TestIcebergCLI(t *testing.T) {
	l := icetest.NewLake(t, "lake", "sqlite", "local")
	l.Create("items", icetest.DocsSchema(), nil)
	l.AppendRows(icetest.IDs(0, 300))
	wh := t.TempDir()
	cli := func(want int, args ...string) string {
		t.Helper()
		out, code := runCLI(t, append([]string{"--warehouse", wh}, args...)...)
		if code != want {
			t.Fatalf("parqdb %s: exit %d, want %d:\n%s", strings.Join(args, " "), code, want, out)
		}
		return out
	}
	cli(0, "index", "create", "docs", "--source", l.Ref(), "--vector-field", "embedding", "--key-fields", "id", "--nlist", "4")
	if out := cli(0, "search", "docs", "--near-key", "42", "-k", "3", "--columns", "id,title", "--format", "csv"); !strings.Contains(out, "\n42,") {
		t.Fatalf("search near 42 does not return 42 first:\n%s", out)
	}
	out := cli(0, "index", "describe", "docs")
	if !strings.Contains(out, "iceberg://lake/docs/items") || !strings.Contains(out, "source-snapshot") {
		t.Fatalf("describe:\n%s", out)
	}
	cli(0, "index", "verify", "docs")
	l.AppendRows(icetest.IDs(300, 330))
	if out := cli(1, "index", "verify", "docs"); !strings.Contains(out, "changed since snapshot") {
		t.Fatalf("verify of a stale index:\n%s", out)
	}
	if out := cli(0, "index", "refresh", "docs"); !strings.Contains(out, "incremental refresh") {
		t.Fatalf("refresh:\n%s", out)
	}
	cli(0, "index", "verify", "docs")
	if out := cli(0, "search", "docs", "--near-key", "317", "-k", "1", "--columns", "id", "--format", "csv"); !strings.Contains(out, "\n317,") {
		t.Fatalf("search near an appended row:\n%s", out)
	}
}
