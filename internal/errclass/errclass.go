// Package errclass gives errors a class that front ends map to a response
// without importing every package that can fail (pebble's
// base.MarkCorruptionError idea). One class exists: ErrCorrupt, stored data
// that is damaged or inconsistent.
//
// A package whose sentinel always means corrupt stored data makes it with
// Corrupt; a reader that knows an error came from stored data (a metadata
// file that does not validate, a location read from it that escapes the
// warehouse) marks it with MarkCorrupt. Either way errors.Is(err,
// ErrCorrupt) holds, the package's own sentinel still matches, and the
// message is unchanged.
package errclass

import "errors"

// ErrCorrupt is the class of errors that report stored data (an index file,
// a metadata file, a catalog record) damaged or inconsistent.
var ErrCorrupt = errors.New("corrupt data")

// Corrupt returns a new sentinel error with the given text, of the corrupt
// class: like errors.New(text), and errors.Is(err, ErrCorrupt) holds for
// every error that wraps it.
func Corrupt(text string) error { return &classed{text: text, class: ErrCorrupt} }

// MarkCorrupt returns err in the corrupt class, or nil for nil: the same
// message and chain (errors.Is and errors.As see err), and errors.Is(…,
// ErrCorrupt) holds.
func MarkCorrupt(err error) error {
	if err == nil {
		return nil
	}
	return &marked{err: err, class: ErrCorrupt}
}

type classed struct {
	text  string
	class error
}

func (e *classed) Error() string { return e.text }

func (e *classed) Is(target error) bool { return target == e.class }

type marked struct {
	err   error
	class error
}

func (e *marked) Error() string { return e.err.Error() }

func (e *marked) Unwrap() error { return e.err }

func (e *marked) Is(target error) bool { return target == e.class }
