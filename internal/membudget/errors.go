package membudget

import "errors"

// ErrSize marks a cache size that cannot be parsed or is out of range.
var ErrSize = errors.New("bad cache size")
