package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/query/rowjson"
)

// LoadLimits bound the work and memory of searches in flight, across
// requests. With them the server's memory is bounded by the caches plus
// MaxConcurrent × (MaxRows joined result rows, once as Go values and once
// as JSON) plus GOMAXPROCS × the working set of one query: see
// docs/serve.md, "Limits". The HTTP API and the SQL table functions share
// one Admitter.
type LoadLimits struct {
	// MaxConcurrent bounds the search requests running at once (default
	// GOMAXPROCS). Query vectors of all running requests together run on
	// at most GOMAXPROCS goroutines.
	MaxConcurrent int
	// MaxQueue bounds the search requests waiting for a running slot
	// (default 4 × MaxConcurrent; negative: no queue). A request that
	// finds the queue full is answered 503 overloaded with Retry-After.
	MaxQueue int
	// MaxRows bounds k × query vectors of one request, the rows one
	// answer may hold (default 100,000).
	MaxRows int
}

// DefaultMaxRows is LoadLimits.MaxRows's default.
const DefaultMaxRows = 100_000

// retryAfter is the Retry-After (seconds) sent with 503 overloaded.
const retryAfter = "1"

// CodeOverloaded is the code of the 503 answer to a search request that
// found every running slot busy and the queue full. It is part of the
// API contract, like the codes in errors.go.
const CodeOverloaded = "overloaded"

// errOverloaded is the cause of CodeOverloaded answers.
var errOverloaded = errors.New("server overloaded")

// withDefaults fills zero fields.
func (l LoadLimits) withDefaults() LoadLimits {
	if l.MaxConcurrent == 0 {
		l.MaxConcurrent = runtime.GOMAXPROCS(0)
	}
	switch {
	case l.MaxQueue == 0:
		l.MaxQueue = 4 * l.MaxConcurrent
	case l.MaxQueue < 0:
		l.MaxQueue = 0
	}
	if l.MaxRows == 0 {
		l.MaxRows = DefaultMaxRows
	}
	return l
}

// Validate reports every bad field at once.
func (l LoadLimits) Validate() error {
	var errs []error
	if l.MaxConcurrent < 0 {
		errs = append(errs, fmt.Errorf("limits: MaxConcurrent %d is negative", l.MaxConcurrent))
	}
	if l.MaxRows < 0 {
		errs = append(errs, fmt.Errorf("limits: MaxRows %d is negative", l.MaxRows))
	}
	return errors.Join(errs...)
}

// CheckRows refuses a request whose answer could hold more than MaxRows
// rows (k for each of n query vectors), before any search work.
func (l LoadLimits) CheckRows(k, n int) error {
	l = l.withDefaults()
	if int64(k)*int64(n) > int64(l.MaxRows) {
		return errorf(http.StatusBadRequest, CodeOutOfRange,
			"k × query vectors = %d × %d = %d rows exceed the limit of %d rows per answer: lower k or send fewer vectors per request",
			k, n, int64(k)*int64(n), l.MaxRows)
	}
	return nil
}

// Admitter admits search requests: at most MaxConcurrent run, at most
// MaxQueue wait (first come, first served), the rest are refused at once.
// It also bounds the query vectors searched at once across all running
// requests to GOMAXPROCS. It is safe for concurrent use.
type Admitter struct {
	limits  LoadLimits
	running chan struct{} // a token per running request
	workers chan struct{} // a token per query vector being searched
	mu      struct {
		sync.Mutex
		waiting  int
		rejected int64
	}
}

// AdmitterStats are an Admitter's gauges and counters.
type AdmitterStats struct {
	Running, Waiting int   // requests running / waiting now
	Rejected         int64 // requests answered 503 overloaded
}

// Stats returns the Admitter's current figures.
func (a *Admitter) Stats() AdmitterStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return AdmitterStats{Running: len(a.running), Waiting: a.mu.waiting, Rejected: a.mu.rejected}
}

// NewAdmitter returns an Admitter for l (zero fields: defaults).
func NewAdmitter(l LoadLimits) *Admitter {
	l = l.withDefaults()
	return &Admitter{
		limits:  l,
		running: make(chan struct{}, l.MaxConcurrent),
		workers: make(chan struct{}, runtime.GOMAXPROCS(0)),
	}
}

// Limits returns the effective limits.
func (a *Admitter) Limits() LoadLimits { return a.limits }

// Admit waits for a running slot. It returns a release function to call
// when the request's work is done, or an error: 503 overloaded (the queue
// is full) or 504 timeout (ctx's deadline passed while waiting).
func (a *Admitter) Admit(ctx context.Context) (release func(), err error) {
	select {
	case a.running <- struct{}{}:
		return a.releaseFunc(), nil
	default:
	}
	a.mu.Lock()
	if a.mu.waiting >= a.limits.MaxQueue {
		a.mu.rejected++
		a.mu.Unlock()
		return nil, &Error{http.StatusServiceUnavailable, CodeOverloaded, fmt.Sprintf(
			"%d searches are running and %d waiting, the most this server takes: retry after %s s", a.limits.MaxConcurrent, a.limits.MaxQueue, retryAfter), errOverloaded}
	}
	a.mu.waiting++
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.mu.waiting--
		a.mu.Unlock()
	}()
	select {
	case a.running <- struct{}{}:
		return a.releaseFunc(), nil
	case <-ctx.Done():
		return nil, timeoutError(ctx, "waiting for a running slot")
	}
}

func (a *Admitter) releaseFunc() func() {
	var once sync.Once
	return func() { once.Do(func() { <-a.running }) }
}

// worker waits for one of the GOMAXPROCS query slots; call the returned
// function when the query is done.
func (a *Admitter) worker(ctx context.Context) (func(), error) {
	select {
	case a.workers <- struct{}{}:
		return func() { <-a.workers }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// timeoutError is the 504 answer of a request whose deadline passed,
// saying in which stage.
func timeoutError(ctx context.Context, stage string) *Error {
	msg := "the request exceeded its time limit while " + stage
	if d, ok := ctx.Deadline(); ok {
		if lim, ok := ctx.Value(timeLimitKey{}).(time.Duration); ok {
			msg = fmt.Sprintf("the request exceeded its time limit of %v while %s", lim, stage)
		} else {
			msg = fmt.Sprintf("the request exceeded its deadline (%s) while %s", d.UTC().Format(time.RFC3339Nano), stage)
		}
	}
	return &Error{http.StatusGatewayTimeout, CodeTimeout, msg + "; ask for less (k, nprobe, refine, fewer vectors) or a longer timeout_ms", context.DeadlineExceeded}
}

// httpTimeout answers every timeout over HTTP with 504, whatever status
// AsError gave it: the server, not the client, ran out of time.
func httpTimeout(e *Error) *Error {
	if e.Code == CodeTimeout && e.Status != http.StatusGatewayTimeout {
		c := *e
		c.Status = http.StatusGatewayTimeout
		return &c
	}
	return e
}

// timeLimitKey holds a request's time limit in its context, for messages.
type timeLimitKey struct{}

// withTimeLimit returns ctx with a deadline d after start.
func withTimeLimit(ctx context.Context, start time.Time, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithDeadline(context.WithValue(ctx, timeLimitKey{}, d), start.Add(d))
}

// searchBatch searches every query vector of one request, in order, on
// the shared query slots: however many requests run, at most GOMAXPROCS
// query vectors are searched at once. It stops at the first error or when
// ctx ends.
func (a *Admitter) searchBatch(ctx context.Context, ix *query.Index, qs [][]float32, opts query.Options) ([]*query.Result, error) {
	out := make([]*query.Result, len(qs))
	if len(qs) == 1 { // the common case: no goroutine, no derived context
		done, err := a.worker(ctx)
		if err != nil {
			return nil, err
		}
		defer done()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if out[0], err = ix.Search(ctx, qs[0], opts); err != nil {
			return nil, fmt.Errorf("query 0: %w", err)
		}
		return out, ctx.Err()
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(cap(a.workers))
	for i, q := range qs {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			done, err := a.worker(gctx)
			if err != nil {
				return err
			}
			defer done()
			if err := gctx.Err(); err != nil {
				return err
			}
			r, err := ix.Search(gctx, q, opts)
			if err != nil {
				return fmt.Errorf("query %d: %w", i, err)
			}
			out[i] = r
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// queries is the number of query vectors the plan searches.
func (p *searchPlan) queries() int {
	if p.key != nil {
		return 1
	}
	return len(p.vectors)
}

// respBufs holds answer buffers for reuse (an answer of 10 GloVe rows is
// ~10 KB: growing a fresh buffer to that size was the handler's largest
// allocation). Buffers above maxPooledResp are left to the collector.
var respBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledResp = 1 << 20

// encodeResponseTo encodes resp as one JSON line into b (reset first), as
// writeJSON would, checking ctx every encodeCheckRows rows: encoding a
// large answer is part of the request's time limit. Rows are released as
// they are encoded, so the answer is held about once, not twice, at the
// end. The answer is b's bytes.
func encodeResponseTo(ctx context.Context, b *bytes.Buffer, resp *SearchResponse) ([]byte, error) {
	b.Reset()
	out := b.AvailableBuffer()
	out = append(out, `{"index":`...)
	out = rowjson.AppendString(out, resp.Index, false)
	out = append(out, `,"snapshot_id":`...)
	out = strconv.AppendInt(out, resp.SnapshotID, 10)
	out = append(out, `,"columns":`...)
	if resp.Columns == nil {
		out = append(out, "null"...)
	} else {
		out = append(out, '[')
		for i, c := range resp.Columns {
			if i > 0 {
				out = append(out, ',')
			}
			out = rowjson.AppendString(out, c, false)
		}
		out = append(out, ']')
	}
	b.Write(out)
	b.WriteString(`,"results":[`)
	n := 0
	for i, rows := range resp.Results {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('[')
		for j, row := range rows {
			if n%encodeCheckRows == 0 && ctx.Err() != nil {
				return nil, timeoutError(ctx, "encoding the answer")
			}
			n++
			if j > 0 {
				b.WriteByte(',')
			}
			var data []byte
			var err error
			if resp.rows != nil {
				data, err = resp.rows.appendRow(b.AvailableBuffer(), row)
			} else {
				data, err = row.AppendJSON(b.AvailableBuffer())
			}
			if err != nil {
				return nil, fmt.Errorf("encode query %d row %d: %w", i, j, err)
			}
			b.Write(data)
		}
		b.WriteByte(']')
		resp.Results[i] = nil
	}
	b.WriteString(`],"stats":`)
	b.Write(resp.Stats.appendJSON(b.AvailableBuffer()))
	b.WriteString("}\n")
	if ctx.Err() != nil {
		return nil, timeoutError(ctx, "encoding the answer")
	}
	return b.Bytes(), nil
}

// encodeCheckRows is how many rows encodeResponse encodes between two
// looks at the deadline.
const encodeCheckRows = 256

// writeTimeFloor and writeRate bound the time writeBody expects a body
// to take on a local network: when less remains before the deadline,
// the answer is 504 rather than a 200 that the deadline would cut.
const (
	writeTimeFloor = 20 * time.Millisecond
	writeRate      = 200 << 20 // bytes per second
)

// writeBody writes a 200 answer whose body (of contentType) is already encoded, within
// the request's deadline. When too little time remains to send the body
// (writeTimeFloor + len(body) at writeRate) the answer is 504 timeout
// instead. A client that reads too slowly has its connection closed at
// the deadline: the answer is then cut short (the status line has gone
// out; the client gets fewer bytes than Content-Length).
func writeBody(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, body []byte, contentType string) error {
	if d, ok := ctx.Deadline(); ok {
		need := writeTimeFloor + time.Duration(float64(len(body))/writeRate*float64(time.Second))
		if err := ctx.Err(); err != nil || time.Until(d) < need {
			return timeoutError(ctx, "writing the answer")
		}
		_ = rc.SetWriteDeadline(d)
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	hc := heldConnOf(ctx)
	if hc == nil || len(body) <= heldMin || len(body) > maxHeld {
		w.WriteHeader(http.StatusOK)
		_, err := w.Write(body)
		return err
	}
	// The header and the body leave in one write call (heldConn).
	hc.hold()
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(body)
	if err == nil {
		err = rc.Flush()
	}
	if serr := hc.send(); err == nil {
		err = serr
	}
	return err
}

// heldMin is the body size above which writeBody holds the answer to
// send it in one write: net/http's own buffer takes a smaller body with
// its header.
const heldMin = 2 << 10
