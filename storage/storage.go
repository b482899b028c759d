package storage

import (
	"context"
	"errors"
	"fmt"
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

// WriteWith creates the object key and lets fill write it. The object
// becomes visible only if fill and the final Close succeed; otherwise it is
// aborted. It returns the bytes written. Errors name the key: "create KEY:
// …" when the object cannot be started, "write KEY: …" otherwise.
func WriteWith(ctx context.Context, b Bucket, key string, fill func(io.Writer) error) (int64, error) {
	w, err := b.Create(ctx, key)
	if err != nil {
		return 0, fmt.Errorf("create %s: %w", key, err)
	}
	cw := &countingWriter{w: w}
	if err := fill(cw); err != nil {
		_ = w.Abort()
		return 0, fmt.Errorf("write %s: %w", key, err)
	}
	if err := w.Close(); err != nil {
		return 0, fmt.Errorf("write %s: %w", key, err)
	}
	return cw.n, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
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
