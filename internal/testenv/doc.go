// Package testenv gives tests real servers on 127.0.0.1: an S3-compatible
// object store (versitygw, see S3) and PostgreSQL. Nothing is mocked: the
// tests talk to the same kind of server a user runs.
//
// Each server starts lazily, at most once per test process, on a random free
// port, with its data in a temporary folder. A package whose tests use a
// server stops it at process exit by running its tests through Main:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
// On Linux the servers also die with the test process if it is killed
// before Main returns. The binaries come from PATH or from
// $PARQDB_TOOLS/bin (default ~/.cache/parqdb-tools/bin); `make deps`
// installs them there.
//
// Besides the servers: SkipShort, the one rule of the fast loop, and Deps,
// a package's dependencies as the go command lists them.
package testenv

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Main runs the tests of m, then stops every server this process started
// and removes their data, and exits with the tests' exit code. Call it
// from TestMain; it does not return.
func Main(m *testing.M) {
	code := m.Run()
	stopAll()
	os.Exit(code)
}

var exitHooks struct {
	sync.Mutex
	fns []func()
}

// AtExit registers f to run when Main finishes the tests (after the
// servers stop), e.g. to remove a package's build folder.
func AtExit(f func()) { atExit(f) }

// atExit registers stop to run when Main finishes the tests. Hooks run in
// reverse order of registration, each at most once.
func atExit(stop func()) {
	exitHooks.Lock()
	defer exitHooks.Unlock()
	exitHooks.fns = append(exitHooks.fns, stop)
}

// stopAll runs and forgets the registered hooks.
func stopAll() {
	exitHooks.Lock()
	fns := exitHooks.fns
	exitHooks.fns = nil
	exitHooks.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}

// toolsBin is the folder `make deps` installs test binaries into.
func toolsBin() string {
	if dir := os.Getenv("PARQDB_TOOLS"); dir != "" {
		return filepath.Join(dir, "bin")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "parqdb-tools", "bin")
}
