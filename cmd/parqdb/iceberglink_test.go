package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/internal/testenv"
)

// TestIcebergLinked checks the CLI's build choice: the default build links
// the Iceberg provider (iceberg:// sources work as docs/iceberg.md says),
// and -tags noiceberg leaves it and iceberg-go out (docs/benchmarks.md,
// "Binary size").
func TestIcebergLinked(t *testing.T) {
	for _, tc := range []struct {
		tags string
		want bool
	}{{"", true}, {"noiceberg", false}} {
		deps := testenv.Deps(t, tc.tags, ".")
		if !slices.Contains(deps, "github.com/parqdb/parqdb/query") {
			t.Fatalf("go list -tags %q -deps does not list query: %v", tc.tags, deps)
		}
		linked := slices.ContainsFunc(deps, func(d string) bool { return strings.HasPrefix(d, "github.com/apache/iceberg-go") })
		if got := slices.Contains(deps, "github.com/parqdb/parqdb/internal/icesource"); got != tc.want || linked != tc.want {
			t.Errorf("-tags %q: icesource linked %v, iceberg-go linked %v, want %v", tc.tags, got, linked, tc.want)
		}
	}
}
