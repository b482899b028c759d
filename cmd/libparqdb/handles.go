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

// handles maps the integers the C side holds to Go objects.
var handles struct {
	mu   sync.Mutex
	next int64
	m    map[int64]any
}

// newHandle registers v and returns its handle.
func newHandle(v any) int64 {
	handles.mu.Lock()
	defer handles.mu.Unlock()
	if handles.m == nil {
		handles.m = make(map[int64]any)
	}
	handles.next++
	handles.m[handles.next] = v
	return handles.next
}

// lookup returns the object of handle h as a T, or an invalid_argument
// error naming h and what was expected.
func lookup[T any](h int64, what string) (T, error) {
	handles.mu.Lock()
	v, ok := handles.m[h]
	handles.mu.Unlock()
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
	v, ok := handles.m[h]
	delete(handles.m, h)
	handles.mu.Unlock()
	if c, isCloser := v.(io.Closer); ok && isCloser {
		c.Close()
	}
	return ok
}

// openHandles counts the registered handles (for the leak tests).
func openHandles() int {
	handles.mu.Lock()
	defer handles.mu.Unlock()
	return len(handles.m)
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
