package storage

import (
	"context"
	"fmt"
	"sync"
)

// SizedOpener is implemented by buckets that can open an object whose size
// the caller already knows (from a manifest) without asking the backend:
// S3 then sends no HEAD request, so opening an index costs the same number
// of requests whatever its number of files.
type SizedOpener interface {
	// OpenSized returns an Object of the given size that sends no request
	// until its first ReadAt. A missing object, or one whose length is not
	// size, is reported by a read, not by OpenSized.
	OpenSized(ctx context.Context, key string, size int64) (Object, error)
}

// OpenSized opens key, which the caller knows to be size bytes long, without
// a request: through b's SizedOpener if it has one, otherwise lazily, with
// b.Open on the first ReadAt (which then reports an object whose size is
// not size, wrapping ErrChanged). A bad key is refused at once. The Object
// outlives ctx's cancellation, like one from Open.
func OpenSized(ctx context.Context, b Bucket, key string, size int64) (Object, error) {
	if so, ok := b.(SizedOpener); ok {
		return so.OpenSized(ctx, key, size)
	}
	if err := keyError("open", b.String(), key); err != nil {
		return nil, err
	}
	if size < 0 {
		return nil, &Error{Op: "open", Key: key, Bucket: b.String(), Err: fmt.Errorf("negative size %d", size)}
	}
	return &lazyObject{ctx: context.WithoutCancel(ctx), b: b, key: key, size: size}, nil
}

// lazyObject opens its object on first read. A failed open is not
// remembered: the next read tries again.
type lazyObject struct {
	ctx  context.Context
	b    Bucket
	key  string
	size int64
	mu   struct {
		sync.Mutex
		o      Object
		closed bool
	}
}

func (l *lazyObject) Size() int64 { return l.size }

func (l *lazyObject) object() (Object, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return nil, &Error{Op: "read", Key: l.key, Bucket: l.b.String(), Err: ErrClosed}
	}
	if l.mu.o != nil {
		return l.mu.o, nil
	}
	o, err := l.b.Open(l.ctx, l.key)
	if err != nil {
		return nil, err
	}
	if o.Size() != l.size {
		o.Close()
		return nil, &Error{Op: "read", Key: l.key, Bucket: l.b.String(),
			Err: fmt.Errorf("%w: %d bytes, expected %d", ErrChanged, o.Size(), l.size)}
	}
	l.mu.o = o
	return o, nil
}

// ReadAt opens the object if needed and reads from it.
func (l *lazyObject) ReadAt(p []byte, off int64) (int, error) {
	o, err := l.object()
	if err != nil {
		return 0, err
	}
	return o.ReadAt(p, off)
}

// Close closes the object if a read opened it.
func (l *lazyObject) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.closed = true
	if l.mu.o == nil {
		return nil
	}
	err := l.mu.o.Close()
	l.mu.o = nil
	return err
}

// OpenSized sends no request: the size comes from the caller, and reads are
// not conditional on an ETag (the objects opened this way are immutable
// files that a manifest lists with their checksums).
func (s *S3) OpenSized(ctx context.Context, key string, size int64) (Object, error) {
	if err := s.begin(ctx, "open", key); err != nil {
		return nil, err
	}
	if size < 0 {
		return nil, &Error{Op: "open", Key: key, Bucket: s.name, Err: fmt.Errorf("negative size %d", size)}
	}
	return &s3Object{ctx: context.WithoutCancel(ctx), s: s, key: key, size: size}, nil
}

// OpenSized counts no request: the object's reads are counted as usual.
func (sb *statsBucket) OpenSized(ctx context.Context, key string, size int64) (Object, error) {
	o, err := OpenSized(ctx, sb.b, key, size)
	if err != nil {
		return nil, err
	}
	return &statsObject{Object: o, s: sb.s}, nil
}
