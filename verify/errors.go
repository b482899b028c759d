package verify

import "errors"

// Errors Run returns when it cannot run at all. Broken invariants are never
// errors: they are failed checks in the Report.
var (
	// ErrOptions means Options are invalid.
	ErrOptions = errors.New("verify: invalid options")
	// ErrNoSnapshot means Options.SnapshotID names no retained snapshot.
	ErrNoSnapshot = errors.New("verify: no such snapshot")
)
