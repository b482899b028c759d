package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
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
		out, err := exec.Command("go", "list", "-tags", tc.tags, "-deps", ".").CombinedOutput()
		if err != nil {
			t.Fatalf("go list -tags %q -deps: %v\n%s", tc.tags, err, out)
		}
		deps := strings.Fields(string(out))
		if !slices.Contains(deps, "github.com/parqdb/parqdb/query") {
			t.Fatalf("go list -tags %q -deps does not list query: %s", tc.tags, out)
		}
		linked := slices.ContainsFunc(deps, func(d string) bool { return strings.HasPrefix(d, "github.com/apache/iceberg-go") })
		if got := slices.Contains(deps, "github.com/parqdb/parqdb/internal/icesource"); got != tc.want || linked != tc.want {
			t.Errorf("-tags %q: icesource linked %v, iceberg-go linked %v, want %v", tc.tags, got, linked, tc.want)
		}
	}
}
