package storage

import (
	"context"
	"io"
	"sync"
)

// Faults chooses operations of a WithFaults bucket to fail, for
// reliability tests. Each field names the Nth call (counting from 1, across
// all objects and writers of the bucket) of one kind of operation; 0 never
// fails. Each fault fires once. Set the fields before wrapping; afterwards
// the wrapper owns the counters and is safe for concurrent use.
//
// Injected errors are *Error values naming the key and wrapping Err (or
// ErrInjected if Err is nil).
type Faults struct {
	// FailOpen fails the Nth Open without opening anything.
	FailOpen int64
	// FailWrite fails the Nth Writer.Write; that writer then refuses
	// further writes and its Close fails, so nothing becomes visible.
	FailWrite int64
	// FailClose fails the Nth Writer.Close; the object is aborted, so
	// nothing becomes visible.
	FailClose int64
	// FailPut fails the Nth PutIfAbsent without storing anything.
	FailPut int64
	// FailRead fails the Nth Object.ReadAt, returning 0 bytes.
	FailRead int64
	// ShortRead makes the Nth Object.ReadAt return only the first half of
	// the bytes it would return (rounded down) and io.ErrUnexpectedEOF, as
	// a connection dropped mid-response does. FailRead and ShortRead count
	// the same calls.
	ShortRead int64
	// Err is the injected error; nil means ErrInjected.
	Err error

	mu                                 sync.Mutex
	opens, writes, closes, puts, reads int64
}

// next counts one call of a kind and reports whether it is the chosen one.
func (f *Faults) next(counter *int64, nth int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	*counter++
	return nth > 0 && *counter == nth
}

func (f *Faults) err() error {
	if f.Err != nil {
		return f.Err
	}
	return ErrInjected
}

// WithFaults wraps b so that the operations f chooses fail. IsLocal sees
// through the wrapper.
func WithFaults(b Bucket, f *Faults) Bucket { return &faultBucket{b: b, f: f} }

type faultBucket struct {
	b Bucket
	f *Faults
}

func (fb *faultBucket) Unwrap() Bucket { return fb.b }
func (fb *faultBucket) String() string { return fb.b.String() }

func (fb *faultBucket) inject(op, key string) error {
	return &Error{Op: op, Key: key, Bucket: fb.b.String(), Err: fb.f.err()}
}

func (fb *faultBucket) Open(ctx context.Context, key string) (Object, error) {
	if fb.f.next(&fb.f.opens, fb.f.FailOpen) {
		return nil, fb.inject("open", key)
	}
	o, err := fb.b.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	return &faultObject{Object: o, fb: fb, key: key}, nil
}

func (fb *faultBucket) Stat(ctx context.Context, key string) (Info, error) {
	return fb.b.Stat(ctx, key)
}

func (fb *faultBucket) Create(ctx context.Context, key string) (Writer, error) {
	w, err := fb.b.Create(ctx, key)
	if err != nil {
		return nil, err
	}
	return &faultWriter{Writer: w, fb: fb, key: key}, nil
}

func (fb *faultBucket) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if fb.f.next(&fb.f.puts, fb.f.FailPut) {
		return fb.inject("put-if-absent", key)
	}
	return fb.b.PutIfAbsent(ctx, key, data)
}

func (fb *faultBucket) Delete(ctx context.Context, key string) error {
	return fb.b.Delete(ctx, key)
}

func (fb *faultBucket) List(ctx context.Context, prefix string) ([]Info, error) {
	return fb.b.List(ctx, prefix)
}

type faultObject struct {
	Object
	fb  *faultBucket
	key string
}

func (o *faultObject) ReadAt(p []byte, off int64) (int, error) {
	f := o.fb.f
	f.mu.Lock()
	f.reads++
	fail := f.FailRead > 0 && f.reads == f.FailRead
	short := f.ShortRead > 0 && f.reads == f.ShortRead
	f.mu.Unlock()
	switch {
	case fail:
		return 0, o.fb.inject("read", o.key)
	case short:
		n, err := o.Object.ReadAt(p, off)
		if n == 0 {
			return 0, err
		}
		return n / 2, io.ErrUnexpectedEOF
	}
	return o.Object.ReadAt(p, off)
}

type faultWriter struct {
	Writer
	fb     *faultBucket
	key    string
	failed error
}

func (w *faultWriter) Write(p []byte) (int, error) {
	if w.failed != nil {
		return 0, w.failed
	}
	if w.fb.f.next(&w.fb.f.writes, w.fb.f.FailWrite) {
		w.failed = w.fb.inject("write", w.key)
		return 0, w.failed
	}
	return w.Writer.Write(p)
}

func (w *faultWriter) Close() error {
	if w.failed != nil {
		_ = w.Writer.Abort()
		return w.failed
	}
	if w.fb.f.next(&w.fb.f.closes, w.fb.f.FailClose) {
		_ = w.Writer.Abort()
		return w.fb.inject("close", w.key)
	}
	return w.Writer.Close()
}
