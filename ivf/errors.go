package ivf

import (
	"errors"

	"github.com/parqdb/parqdb/internal/errclass"
)

// Sentinel errors. Errors returned by this package wrap one of them and name
// the offending field or value.
var (
	// ErrInvalidCentroids reports a Centroids value that violates the
	// invariants of ivf-index-schema §5 (see Centroids.Validate). It is of
	// the corrupt class (errclass.ErrCorrupt): centroids are stored data.
	ErrInvalidCentroids = errclass.Corrupt("ivf: invalid centroids")
	// ErrInvalidConfig reports a bad TrainConfig field or argument.
	ErrInvalidConfig = errors.New("ivf: invalid training configuration")
	// ErrSampleTooSmall reports a training sample with fewer rows than NList.
	ErrSampleTooSmall = errors.New("ivf: training sample smaller than nlist")
	// ErrNonFinite reports a NaN or infinite vector element.
	ErrNonFinite = errors.New("ivf: non-finite vector element")
)
