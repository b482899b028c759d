//go:build race

package testenv

// RaceDetector reports whether the tests run under the race detector
// (make test-race-core), whose instrumentation allocates and slows.
const RaceDetector = true
