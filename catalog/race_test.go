//go:build race

package catalog_test

// raceDetector reports whether the tests run under the race detector
// (make test-race-core).
const raceDetector = true
