package calibrate

import "errors"

// Sentinel errors, tested with errors.Is.
var (
	// ErrInvalid means a calibration file breaks its format
	// (docs/parquet-provider-profile.md §4.1); readers ignore such a file
	// and calibrate again.
	ErrInvalid = errors.New("invalid calibration file")
	// ErrBadTarget means a target recall outside (0, 1].
	ErrBadTarget = errors.New("target recall must be in (0, 1]")
	// ErrTooFewRows means the index has too few rows to calibrate (fewer
	// than 2: a query needs at least one other row).
	ErrTooFewRows = errors.New("too few rows to calibrate")
)
