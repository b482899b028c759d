package storage

import (
	"context"
	"sync/atomic"
)

// Stats counts the work a bucket does for its callers. The fields are
// updated atomically; read them with Snapshot (or atomic loads) while the
// bucket is in use.
type Stats struct {
	// Requests counts calls that reach the backend: Open, Stat, List,
	// Delete, PutIfAbsent, Writer.Close and every Object.ReadAt that asks
	// for at least one byte inside the object. Calls refused for a bad key
	// are not counted. One call is one request for a local folder and
	// usually one for S3 (List pages, and multipart uploads take more).
	Requests int64
	// BytesRead is the total returned by Object.ReadAt.
	BytesRead int64
}

// Snapshot returns a consistent-enough copy of the counters (each field is
// loaded atomically).
func (s *Stats) Snapshot() Stats {
	return Stats{Requests: atomic.LoadInt64(&s.Requests), BytesRead: atomic.LoadInt64(&s.BytesRead)}
}

// WithStats wraps b so that its use is counted in the returned Stats. The
// wrapper is safe for concurrent use; IsLocal sees through it.
func WithStats(b Bucket) (Bucket, *Stats) {
	s := &Stats{}
	return &statsBucket{b: b, s: s}, s
}

type statsBucket struct {
	b Bucket
	s *Stats
}

func (sb *statsBucket) Unwrap() Bucket { return sb.b }
func (sb *statsBucket) String() string { return sb.b.String() }

func (sb *statsBucket) count(valid error) {
	if valid == nil {
		atomic.AddInt64(&sb.s.Requests, 1)
	}
}

func (sb *statsBucket) Open(ctx context.Context, key string) (Object, error) {
	sb.count(CheckKey(key))
	o, err := sb.b.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	return &statsObject{Object: o, s: sb.s}, nil
}

func (sb *statsBucket) Stat(ctx context.Context, key string) (Info, error) {
	sb.count(CheckKey(key))
	return sb.b.Stat(ctx, key)
}

func (sb *statsBucket) Create(ctx context.Context, key string) (Writer, error) {
	w, err := sb.b.Create(ctx, key)
	if err != nil {
		return nil, err
	}
	return &statsWriter{Writer: w, s: sb.s}, nil
}

func (sb *statsBucket) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	sb.count(CheckKey(key))
	return sb.b.PutIfAbsent(ctx, key, data)
}

func (sb *statsBucket) Delete(ctx context.Context, key string) error {
	sb.count(CheckKey(key))
	return sb.b.Delete(ctx, key)
}

func (sb *statsBucket) List(ctx context.Context, prefix string) ([]Info, error) {
	sb.count(CheckPrefix(prefix))
	return sb.b.List(ctx, prefix)
}

type statsObject struct {
	Object
	s *Stats
}

func (o *statsObject) ReadAt(p []byte, off int64) (int, error) {
	if len(p) > 0 && off >= 0 && off < o.Size() {
		atomic.AddInt64(&o.s.Requests, 1)
	}
	n, err := o.Object.ReadAt(p, off)
	atomic.AddInt64(&o.s.BytesRead, int64(n))
	return n, err
}

type statsWriter struct {
	Writer
	s *Stats
}

func (w *statsWriter) Close() error {
	atomic.AddInt64(&w.s.Requests, 1)
	return w.Writer.Close()
}
