package query_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/internal/testenv"
)

// TestNoIcebergDependency keeps the Iceberg provider out of the search
// core: query, and the README's search example built on it, do not link
// iceberg-go (nor, with it, Arrow compute, Substrait, gRPC and the SQL
// dialects); a program links it by importing package iceberg
// (docs/benchmarks.md, "Binary size").
func TestNoIcebergDependency(t *testing.T) {
	for _, pkg := range []string{"github.com/parqdb/parqdb/query", "github.com/parqdb/parqdb/examples/search"} {
		deps := testenv.Deps(t, "", pkg)
		if !slices.Contains(deps, "github.com/parqdb/parqdb/internal/source") {
			t.Fatalf("go list -deps %s does not list internal/source: %v", pkg, deps)
		}
		for _, d := range deps {
			if strings.HasPrefix(d, "github.com/apache/iceberg-go") || d == "github.com/parqdb/parqdb/internal/icesource" {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
}
