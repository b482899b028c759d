package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/query"
)

// handles maps the integers the C side holds to Go objects. A handle is
// a slot number plus one in its low 32 bits and the slot's generation in
// the high bits, so that a released handle never names the next object of
// its slot. Lookups take no lock (a search makes two): they load the
// table and the slot atomically; registering and releasing lock mu.
var handles struct {
	mu    sync.Mutex
	table atomic.Pointer[[]atomic.Pointer[entry]] // grown by copying, under mu
	gen   []uint32                                // each slot's generation, under mu
	free  []int32                                 // released slots, under mu
	n     int                                     // registered handles, under mu
}

// entry is one registered object.
type entry struct {
	h int64
	v any
}

// newHandle registers v and returns its handle.
func newHandle(v any) int64 { return register(new(entry), v) }

// register registers v in e, an entry never registered before (an
// object may carry its own, saving an allocation a call), and returns
// its handle.
func register(e *entry, v any) int64 {
	handles.mu.Lock()
	defer handles.mu.Unlock()
	var slot int32
	if n := len(handles.free); n > 0 {
		slot = handles.free[n-1]
		handles.free = handles.free[:n-1]
	} else {
		slot = int32(len(handles.gen))
		handles.gen = append(handles.gen, 0)
		t := handles.table.Load()
		if t == nil || int(slot) >= len(*t) {
			grown := make([]atomic.Pointer[entry], max(64, 2*len(handles.gen)))
			if t != nil {
				for i := range *t {
					grown[i].Store((*t)[i].Load())
				}
			}
			handles.table.Store(&grown)
		}
	}
	h := int64(handles.gen[slot])<<32 | int64(slot+1)
	e.h, e.v = h, v
	(*handles.table.Load())[slot].Store(e)
	handles.n++
	return h
}

// get returns the object of handle h, if it is registered.
func get(h int64) (any, bool) {
	slot := int64(uint32(h)) - 1
	t := handles.table.Load()
	if h <= 0 || t == nil || slot < 0 || slot >= int64(len(*t)) {
		return nil, false
	}
	e := (*t)[slot].Load()
	if e == nil || e.h != h {
		return nil, false
	}
	return e.v, true
}

// lookup returns the object of handle h as a T, or an invalid_argument
// error naming h and what was expected.
func lookup[T any](h int64, what string) (T, error) {
	v, ok := get(h)
	t, isT := v.(T)
	if !ok || !isT {
		return t, fmt.Errorf("%w: handle %d is not an open %s", query.ErrBadQuery, h, what)
	}
	return t, nil
}

// release forgets handle h and closes its object when it has a Close
// method; it reports whether h was open.
func release(h int64) bool {
	handles.mu.Lock()
	v, ok := forget(h)
	handles.mu.Unlock()
	if c, isCloser := v.(io.Closer); ok && isCloser {
		c.Close()
	}
	return ok
}

// releaseMany releases the handles hs as release does each, taking the
// lock once.
func releaseMany(hs []int64) {
	var closers []io.Closer
	handles.mu.Lock()
	for _, h := range hs {
		if v, ok := forget(h); ok {
			if c, isCloser := v.(io.Closer); isCloser {
				closers = append(closers, c)
			}
		}
	}
	handles.mu.Unlock()
	for _, c := range closers {
		c.Close()
	}
}

// forget unregisters handle h and returns its object, if it was
// registered. The caller holds handles.mu.
func forget(h int64) (any, bool) {
	v, ok := get(h)
	if ok {
		slot := int32(uint32(h)) - 1
		(*handles.table.Load())[slot].Store(nil)
		handles.gen[slot] = (handles.gen[slot] + 1) & (1<<31 - 1) // handles stay positive
		handles.free = append(handles.free, slot)
		handles.n--
	}
	return v, ok
}

// openHandles counts the registered handles (for the leak tests).
func openHandles() int {
	handles.mu.Lock()
	defer handles.mu.Unlock()
	return handles.n
}

// task is the cancellation and progress of one long call.
type task struct {
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	stage  string
	start  time.Time // the stage's
	total  int64
	done   atomic.Int64
	warns  []string
}

func newTask() *task {
	ctx, cancel := context.WithCancel(context.Background())
	return &task{ctx: ctx, cancel: cancel}
}

func (t *task) Close() error { t.cancel(); return nil }

// The indexer.Progress methods: the state parqdb_task_progress reports.

func (t *task) Start(stage string, total int64) {
	t.mu.Lock()
	t.stage, t.start, t.total = stage, time.Now(), total
	t.mu.Unlock()
	t.done.Store(0)
}

func (t *task) SetTotal(total int64) {
	t.mu.Lock()
	t.total = total
	t.mu.Unlock()
}

func (t *task) Add(n int64) { t.done.Add(n) }

func (t *task) End(string, time.Duration) {}

func (t *task) Warn(msg string) {
	t.mu.Lock()
	t.warns = append(t.warns, msg)
	t.mu.Unlock()
}

// progress is the JSON parqdb_task_progress returns: the running stage,
// the unit of its counts (indexer.StageUnit; "" when it counts nothing)
// and the seconds since it started, so that a display's rate is the
// stage's, however late its first poll.
type progress struct {
	Stage    string   `json:"stage"`
	Unit     string   `json:"unit"`
	Elapsed  float64  `json:"elapsed"`
	Total    int64    `json:"total"`
	Done     int64    `json:"done"`
	Warnings []string `json:"warnings"`
}

func (t *task) snapshot() progress {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := progress{Stage: t.stage, Unit: indexer.StageUnit(t.stage), Total: t.total, Done: t.done.Load(),
		Warnings: append([]string{}, t.warns...)}
	if t.stage != "" {
		p.Elapsed = time.Since(t.start).Seconds()
	}
	return p
}

// taskContext is the context of task handle h; 0 means no task.
func taskContext(h int64) (context.Context, *task, error) {
	if h == 0 {
		return context.Background(), nil, nil
	}
	t, err := lookup[*task](h, "task")
	if err != nil {
		return nil, nil, err
	}
	return t.ctx, t, nil
}
