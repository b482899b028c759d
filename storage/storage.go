package storage

import (
	"context"
	"errors"
	"io"
	"time"
)

// Object is an open, immutable object. ReadAt is safe for concurrent use.
type Object interface {
	io.ReaderAt
	io.Closer
	// Size is the object's length in bytes.
	Size() int64
}

// Writer receives a new object's bytes. Nothing is visible to readers until
// Close returns nil; Abort (or a failed Close) leaves nothing behind that a
// reader can reach. One of Close or Abort must be called; Abort after a
// successful Close does nothing and returns nil, so `defer w.Abort()` is a
// safe cleanup. Write and Close after Close or Abort fail with ErrClosed.
// A Writer is used by one goroutine at a time.
type Writer interface {
	io.Writer
	Close() error
	Abort() error
}

// Info describes a stored object.
type Info struct {
	Key     string
	Size    int64
	ModTime time.Time
	// ETag identifies the object's content version where the backend has
	// one (S3); local folders give a value derived from size and mtime.
	ETag string
}

// Bucket is a warehouse or a source location. All methods are safe for
// concurrent use.
type Bucket interface {
	// Open opens an object for random access.
	Open(ctx context.Context, key string) (Object, error)
	// Stat describes an object.
	Stat(ctx context.Context, key string) (Info, error)
	// Create starts a new object. Objects are written once: callers use
	// keys never used before; an existing key is replaced atomically.
	Create(ctx context.Context, key string) (Writer, error)
	// PutIfAbsent stores data at key only if no object exists there,
	// atomically across processes and hosts; otherwise it returns an error
	// wrapping ErrExist and changes nothing.
	PutIfAbsent(ctx context.Context, key string, data []byte) error
	// Delete removes an object; deleting a missing object is not an error.
	Delete(ctx context.Context, key string) error
	// List returns the objects whose keys start with prefix, in key order.
	List(ctx context.Context, prefix string) ([]Info, error)
	// String describes the bucket for messages (no credentials).
	String() string
}

// ReadAll reads a whole object into a new slice owned by the caller.
func ReadAll(ctx context.Context, b Bucket, key string) ([]byte, error) {
	o, err := b.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	buf := make([]byte, o.Size())
	// io.ReaderAt may report io.EOF with a read that ends at the end.
	if n, err := o.ReadAt(buf, 0); err != nil && !(errors.Is(err, io.EOF) && n == len(buf)) {
		return nil, err
	}
	return buf, nil
}

// WriteAll stores data as a new object at key with Create, aborting the
// Writer if a write fails.
func WriteAll(ctx context.Context, b Bucket, key string, data []byte) error {
	w, err := b.Create(ctx, key)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		_ = w.Abort()
		return err
	}
	return w.Close()
}
