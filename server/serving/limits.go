package serving

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/parqdb/parqdb/query"
)

// Limits bound what one request may ask for. Requests beyond a limit get
// a 4xx answer (body_too_large, out_of_range) before any search work.
type Limits struct {
	// MaxBodyBytes bounds a request body (default 8 MiB).
	MaxBodyBytes int64
	// MaxK bounds k (default and at most query.MaxK).
	MaxK int
	// MaxNProbe bounds nprobe (default and at most query.MaxNProbe).
	MaxNProbe int
	// MaxRefine bounds refine (default and at most query.MaxRefine).
	MaxRefine int
	// MaxBatch bounds the number of query vectors in one request
	// (default and at most query.MaxBatch).
	MaxBatch int
	// Timeout is the default and greatest time one search request may
	// take (default 30 s); a request may ask for less with timeout_ms.
	Timeout time.Duration
}

// DefaultLimits are the limits a zero Limits field selects.
var DefaultLimits = Limits{
	MaxBodyBytes: 8 << 20,
	MaxK:         query.MaxK,
	MaxNProbe:    query.MaxNProbe,
	MaxRefine:    query.MaxRefine,
	MaxBatch:     query.MaxBatch,
	Timeout:      30 * time.Second,
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits
	if l.MaxBodyBytes == 0 {
		l.MaxBodyBytes = d.MaxBodyBytes
	}
	if l.MaxK == 0 {
		l.MaxK = d.MaxK
	}
	if l.MaxNProbe == 0 {
		l.MaxNProbe = d.MaxNProbe
	}
	if l.MaxRefine == 0 {
		l.MaxRefine = d.MaxRefine
	}
	if l.MaxBatch == 0 {
		l.MaxBatch = d.MaxBatch
	}
	if l.Timeout == 0 {
		l.Timeout = d.Timeout
	}
	return l
}

// Validate reports every bad field at once.
func (l Limits) Validate() error {
	var errs []error
	if l.MaxBodyBytes < 0 {
		errs = append(errs, fmt.Errorf("limits: MaxBodyBytes %d is negative", l.MaxBodyBytes))
	}
	if l.MaxK < 0 || l.MaxK > query.MaxK {
		errs = append(errs, fmt.Errorf("limits: MaxK %d is outside [0, %d]", l.MaxK, query.MaxK))
	}
	if l.MaxNProbe < 0 || l.MaxNProbe > query.MaxNProbe {
		errs = append(errs, fmt.Errorf("limits: MaxNProbe %d is outside [0, %d]", l.MaxNProbe, query.MaxNProbe))
	}
	if l.MaxRefine < 0 || l.MaxRefine > query.MaxRefine {
		errs = append(errs, fmt.Errorf("limits: MaxRefine %d is outside [0, %d]", l.MaxRefine, query.MaxRefine))
	}
	if l.MaxBatch < 0 || l.MaxBatch > query.MaxBatch {
		errs = append(errs, fmt.Errorf("limits: MaxBatch %d is outside [0, %d]", l.MaxBatch, query.MaxBatch))
	}
	if l.Timeout < 0 {
		errs = append(errs, fmt.Errorf("limits: Timeout %v is negative", l.Timeout))
	}
	return errors.Join(errs...)
}

// CheckOptions checks k, nprobe and refine against the limits, with the
// defaults (query.DefaultK, query.DefaultNProbe, no refine) for nil values;
// an explicit 0 for k or nprobe is out of range, as on the CLI. It is shared
// by the HTTP API and the SQL table function.
func (l Limits) CheckOptions(k, nprobe, refine *int) (query.Options, error) {
	l = l.WithDefaults()
	opts := query.Options{K: query.DefaultK, NProbe: query.DefaultNProbe}
	if k != nil {
		if *k < query.MinK || *k > l.MaxK {
			return opts, Errorf(http.StatusBadRequest, CodeOutOfRange, "k = %d is outside [%d, %d]", *k, query.MinK, l.MaxK)
		}
		opts.K = *k
	}
	if nprobe != nil {
		if *nprobe < query.MinNProbe || *nprobe > l.MaxNProbe {
			return opts, Errorf(http.StatusBadRequest, CodeOutOfRange, "nprobe = %d is outside [%d, %d]", *nprobe, query.MinNProbe, l.MaxNProbe)
		}
		opts.NProbe = *nprobe
	}
	if refine != nil {
		if *refine < query.MinRefine || *refine > l.MaxRefine {
			return opts, Errorf(http.StatusBadRequest, CodeOutOfRange, "refine = %d is outside [%d, %d]", *refine, query.MinRefine, l.MaxRefine)
		}
		opts.Refine = *refine
	}
	return opts, nil
}
