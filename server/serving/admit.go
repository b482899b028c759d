package serving

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/parqdb/parqdb/query"
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

// RetryAfter is the Retry-After (seconds) sent with 503 overloaded.
const RetryAfter = "1"

// CodeOverloaded is the code of the 503 answer to a search request that
// found every running slot busy and the queue full. It is part of the
// API contract, like the codes in errors.go.
const CodeOverloaded = "overloaded"

// errOverloaded is the cause of CodeOverloaded answers.
var errOverloaded = errors.New("server overloaded")

// withDefaults fills zero fields.
func (l LoadLimits) WithDefaults() LoadLimits {
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
	l = l.WithDefaults()
	if int64(k)*int64(n) > int64(l.MaxRows) {
		return Errorf(http.StatusBadRequest, CodeOutOfRange,
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
	l = l.WithDefaults()
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
			"%d searches are running and %d waiting, the most this server takes: retry after %s s", a.limits.MaxConcurrent, a.limits.MaxQueue, RetryAfter), errOverloaded}
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
		return nil, TimeoutError(ctx, "waiting for a running slot")
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

// TimeoutError is the 504 answer of a request whose deadline passed,
// saying in which stage.
func TimeoutError(ctx context.Context, stage string) *Error {
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

// timeLimitKey holds a request's time limit in its context, for messages.
type timeLimitKey struct{}

// WithTimeLimit returns ctx with a deadline d after start.
func WithTimeLimit(ctx context.Context, start time.Time, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithDeadline(context.WithValue(ctx, timeLimitKey{}, d), start.Add(d))
}

// SearchBatch searches every query vector of one request on the shared
// query slots, and returns the results in order, each equal to a single
// search's. A batch runs in pieces of consecutive queries (batchPiece),
// each one Index.SearchBatch on one slot — list-major on a large index,
// so that a piece reads each list it probes once — and the pieces run on
// as many slots as are free: however many requests run, at most
// GOMAXPROCS searches run at once, and other requests' queries take turns
// with a batch's pieces. It stops at the first error (naming the query by
// its position in qs) or when ctx ends.
func (a *Admitter) SearchBatch(ctx context.Context, ix *query.Index, qs [][]float32, opts query.Options) ([]*query.Result, error) {
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
			return nil, &query.BatchError{Query: 0, Err: err}
		}
		return out, ctx.Err()
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(cap(a.workers))
	piece := batchPiece(len(qs), cap(a.workers))
	for lo := 0; lo < len(qs); lo += piece {
		if gctx.Err() != nil {
			break
		}
		hi := min(lo+piece, len(qs))
		g.Go(func() error {
			done, err := a.worker(gctx)
			if err != nil {
				return err
			}
			defer done()
			if err := gctx.Err(); err != nil {
				return err
			}
			rs, err := ix.SearchBatch(gctx, qs[lo:hi], opts, 1)
			if be, ok := err.(*query.BatchError); ok {
				return &query.BatchError{Query: lo + be.Query, Err: be.Err}
			} else if err != nil {
				return err
			}
			copy(out[lo:hi], rs)
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

// maxBatchPiece bounds the queries of a batch one slot searches at a time
// (Admitter.SearchBatch): more share more lists, fewer let other requests
// take their turn sooner.
const maxBatchPiece = 256

// batchPiece returns the queries per piece for n queries on slots slots:
// every slot gets a piece (a batch uses every core of an idle server), up
// to maxBatchPiece.
func batchPiece(n, slots int) int {
	return max(1, min(maxBatchPiece, (n+slots-1)/slots))
}
