package reliability

import (
	"context"
	"sync"
	"time"

	"github.com/parqdb/parqdb/storage"
)

// Storage operations a HookBucket reports, named as in storage.Error.Op.
const (
	OpOpen   = "open"
	OpStat   = "stat"
	OpCreate = "create"
	OpWrite  = "write"
	OpClose  = "close"
	OpPut    = "put-if-absent"
	OpDelete = "delete"
	OpList   = "list"
	OpRead   = "read"
)

// Mutating reports whether op changes the warehouse or is part of a write:
// the operations at which a crash harness stops a writer.
func Mutating(op string) bool {
	switch op {
	case OpCreate, OpWrite, OpClose, OpPut, OpDelete:
		return true
	}
	return false
}

// Hooks are called around the operations of a HookBucket. Either may be
// nil. They are called from the goroutine doing the operation, so they
// must be safe for concurrent use when the bucket's user is concurrent.
type Hooks struct {
	// Before runs before the operation. A non-nil error fails the
	// operation, unperformed, with a *storage.Error that names op and key
	// and wraps it (for a Write, the writer is then aborted and refuses
	// further use, as a failed write in storage.WithFaults does).
	Before func(ctx context.Context, op, key string) error
	// After runs once the operation returned err.
	After func(ctx context.Context, op, key string, err error)
}

// NewHookBucket wraps b so that hooks see every operation: Open, Stat,
// Create, PutIfAbsent, Delete and List of the bucket, Write and Close of
// its writers, ReadAt of its objects (with the context Open was given).
// storage.IsLocal sees through it.
func NewHookBucket(b storage.Bucket, h Hooks) storage.Bucket { return &hookBucket{b: b, h: h} }

type hookBucket struct {
	b storage.Bucket
	h Hooks
}

func (hb *hookBucket) Unwrap() storage.Bucket { return hb.b }
func (hb *hookBucket) String() string         { return hb.b.String() }

func (hb *hookBucket) before(ctx context.Context, op, key string) error {
	if hb.h.Before == nil {
		return nil
	}
	if err := hb.h.Before(ctx, op, key); err != nil {
		return &storage.Error{Op: op, Key: key, Bucket: hb.b.String(), Err: err}
	}
	return nil
}

func (hb *hookBucket) after(ctx context.Context, op, key string, err error) {
	if hb.h.After != nil {
		hb.h.After(ctx, op, key, err)
	}
}

func (hb *hookBucket) Open(ctx context.Context, key string) (storage.Object, error) {
	if err := hb.before(ctx, OpOpen, key); err != nil {
		return nil, err
	}
	o, err := hb.b.Open(ctx, key)
	hb.after(ctx, OpOpen, key, err)
	if err != nil {
		return nil, err
	}
	return &hookObject{Object: o, hb: hb, ctx: ctx, key: key}, nil
}

func (hb *hookBucket) Stat(ctx context.Context, key string) (storage.Info, error) {
	if err := hb.before(ctx, OpStat, key); err != nil {
		return storage.Info{}, err
	}
	in, err := hb.b.Stat(ctx, key)
	hb.after(ctx, OpStat, key, err)
	return in, err
}

func (hb *hookBucket) Create(ctx context.Context, key string) (storage.Writer, error) {
	if err := hb.before(ctx, OpCreate, key); err != nil {
		return nil, err
	}
	w, err := hb.b.Create(ctx, key)
	hb.after(ctx, OpCreate, key, err)
	if err != nil {
		return nil, err
	}
	return &hookWriter{Writer: w, hb: hb, ctx: ctx, key: key}, nil
}

func (hb *hookBucket) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if err := hb.before(ctx, OpPut, key); err != nil {
		return err
	}
	err := hb.b.PutIfAbsent(ctx, key, data)
	hb.after(ctx, OpPut, key, err)
	return err
}

func (hb *hookBucket) Delete(ctx context.Context, key string) error {
	if err := hb.before(ctx, OpDelete, key); err != nil {
		return err
	}
	err := hb.b.Delete(ctx, key)
	hb.after(ctx, OpDelete, key, err)
	return err
}

func (hb *hookBucket) List(ctx context.Context, prefix string) ([]storage.Info, error) {
	if err := hb.before(ctx, OpList, prefix); err != nil {
		return nil, err
	}
	infos, err := hb.b.List(ctx, prefix)
	hb.after(ctx, OpList, prefix, err)
	return infos, err
}

type hookObject struct {
	storage.Object
	hb  *hookBucket
	ctx context.Context
	key string
}

func (o *hookObject) ReadAt(p []byte, off int64) (int, error) {
	if err := o.hb.before(o.ctx, OpRead, o.key); err != nil {
		return 0, err
	}
	n, err := o.Object.ReadAt(p, off)
	o.hb.after(o.ctx, OpRead, o.key, err)
	return n, err
}

type hookWriter struct {
	storage.Writer
	hb     *hookBucket
	ctx    context.Context
	key    string
	failed error
}

func (w *hookWriter) Write(p []byte) (int, error) {
	if w.failed != nil {
		return 0, w.failed
	}
	if err := w.hb.before(w.ctx, OpWrite, w.key); err != nil {
		w.failed = err
		_ = w.Writer.Abort()
		return 0, err
	}
	n, err := w.Writer.Write(p)
	w.hb.after(w.ctx, OpWrite, w.key, err)
	return n, err
}

func (w *hookWriter) Close() error {
	if w.failed != nil {
		return w.failed
	}
	if err := w.hb.before(w.ctx, OpClose, w.key); err != nil {
		_ = w.Writer.Abort()
		return err
	}
	err := w.Writer.Close()
	w.hb.after(w.ctx, OpClose, w.key, err)
	return err
}

// Counter counts the operations of a HookBucket by kind. Use its Hooks.
// It is safe for concurrent use.
type Counter struct {
	mu sync.Mutex
	n  map[string]int64
}

// Hooks returns hooks that count each operation before it runs.
func (c *Counter) Hooks() Hooks {
	return Hooks{Before: func(_ context.Context, op, _ string) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.n == nil {
			c.n = map[string]int64{}
		}
		c.n[op]++
		return nil
	}}
}

// Count returns how many operations of kind op were seen.
func (c *Counter) Count(op string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[op]
}

// Total returns how many operations were seen in all.
func (c *Counter) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var t int64
	for _, n := range c.n {
		t += n
	}
	return t
}

// MaxStall bounds how long a StallAt hook waits for its context, so that
// an operation that ignores cancellation shows up as a slow failure
// rather than a hung test.
const MaxStall = 30 * time.Second

// StallAt returns hooks that let operations through except the nth
// (counting from 1, over all kinds), which waits until its context is done
// and fails with the context's error, as a request to a server that stopped
// answering does when the caller's deadline passes. If the context has no
// deadline and is never cancelled, the stall ends after MaxStall with
// context.DeadlineExceeded. Stalled reports whether the stall happened.
func StallAt(nth int64) (h Hooks, stalled func() bool) {
	var mu sync.Mutex
	var n int64
	var hit bool
	h.Before = func(ctx context.Context, _, _ string) error {
		mu.Lock()
		n++
		me := n == nth
		if me {
			hit = true
		}
		mu.Unlock()
		if !me {
			return nil
		}
		t := time.NewTimer(MaxStall)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return context.DeadlineExceeded
		}
	}
	return h, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return hit
	}
}
