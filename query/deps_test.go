package query_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoIcebergDependency keeps the Iceberg provider out of the search
// core: query, and the README's search example built on it, do not link
// iceberg-go (nor, with it, Arrow compute, Substrait, gRPC and the SQL
// dialects); a program links it by importing package iceberg
// (docs/benchmarks.md, "Binary size").
func TestNoIcebergDependency(t *testing.T) {
	for _, pkg := range []string{"github.com/parqdb/parqdb/query", "github.com/parqdb/parqdb/examples/search"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s lists %d packages: %s", pkg, len(deps), out)
		}
		for _, d := range deps {
			if strings.HasPrefix(d, "github.com/apache/iceberg-go") || d == "github.com/parqdb/parqdb/internal/icesource" {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
}
