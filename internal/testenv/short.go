package testenv

import "testing"

// SkipShort skips the test under `go test -short`, the fast loop (README,
// "Tests"; `make test-short`). It is the one rule for what the fast loop
// leaves out, so that rule lives here: tests that start a server process
// (PostgreSQL or S3, which S3 and Postgres skip through this function),
// run child processes or the built CLI (re-executed test binaries, `go
// build`, pseudo-terminals), or take long at a size that repeats what a
// smaller case asserts. what names what is skipped, for the skip message;
// CI runs everything (`make test`).
func SkipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short (the fast loop) skips " + what + "; go test without -short runs it")
	}
}
