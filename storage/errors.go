package storage

import (
	"errors"
	"fmt"
	"io/fs"
)

// Sentinel errors. Implementations wrap them in an *Error that names the
// operation, the key and the bucket, so callers test with errors.Is.
var (
	// ErrNotExist means the object does not exist.
	ErrNotExist = fs.ErrNotExist
	// ErrExist means PutIfAbsent lost: the object already exists.
	ErrExist = fs.ErrExist
	// ErrClosed means a Writer or Object was used after Close or Abort.
	ErrClosed = fs.ErrClosed
	// ErrInjected is the default error a Faults wrapper injects.
	ErrInjected = errors.New("injected fault")
	// ErrUnsupported means Open was given a URL scheme it does not know.
	ErrUnsupported = errors.New("unsupported warehouse URL")
	// ErrNotLeftover means RemoveLeftover was given something that is not
	// an unfinished write; nothing was removed.
	ErrNotLeftover = errors.New("not an unfinished write")
	// ErrChanged means an Object's content was replaced after Open: a read
	// would mix two versions, so it fails instead.
	ErrChanged = errors.New("object changed since it was opened")
)

// Error records a failed operation on one key (or list prefix) of a bucket.
type Error struct {
	// Op is the operation: "open", "stat", "create", "write", "close",
	// "put-if-absent", "delete", "list", "read", "list-leftovers" or
	// "remove-leftover".
	Op string
	// Key is the key or list prefix, as given by the caller.
	Key string
	// Bucket is the bucket's String(): a folder or s3://bucket/prefix.
	Bucket string
	// Err is the cause.
	Err error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %q in %s: %v", e.Op, e.Key, e.Bucket, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
