package testenv

import (
	"os/exec"
	"strings"
	"testing"
)

// Deps returns the import paths of pkgs and everything they import, as
// `go list -tags tags -deps` lists them (tests excluded), for tests that
// keep a dependency out of a package. It fails t when go list fails or
// lists nothing. It runs under -short too: go list reads package headers
// only, well under a second, and needs nothing but the go command that
// runs the tests.
func Deps(t testing.TB, tags string, pkgs ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-tags", tags, "-deps"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -tags %q -deps %s: %v\n%s", tags, strings.Join(pkgs, " "), err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatalf("go list -tags %q -deps %s lists nothing", tags, strings.Join(pkgs, " "))
	}
	return deps
}
