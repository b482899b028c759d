package indexer

import "errors"

// ErrOptions reports invalid build options; the error names each field.
var ErrOptions = errors.New("invalid build options")
