package reliability_test

import (
	"os"
	"testing"

	"github.com/parqdb/parqdb/internal/testenv"
)

// TestMain runs the tests, or, when the test binary is re-executed as a
// child (childEnv set), one child operation (child_test.go).
func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	testenv.Main(m)
}
