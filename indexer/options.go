package indexer

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"time"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/metadata"
)

// Defaults of Options, documented in docs/build.md.
const (
	DefaultMetric   = metadata.MetricL2Squared
	DefaultEncoding = metadata.EncodingLVQ8
	DefaultSeed     = 1
	// DefaultSampleBytes caps the training sample's float32 payload so that
	// peak memory stays bounded whatever N and D are.
	DefaultSampleBytes = 384 << 20
	// DefaultSamplePerList is the number of sample rows per leaf aimed at.
	DefaultSamplePerList = 64
	// MinRowsPerList is the number of rows per list below which the build
	// warns that the index is trained on too few rows.
	MinRowsPerList = 39
	// DefaultChunkRows is the number of source rows assigned and encoded as
	// one parallel unit.
	DefaultChunkRows = 16384
)

// Reuse modes of Options.ReuseCentroids.
const (
	ReuseAuto  = "auto"
	ReuseNever = "never"
)

// Options configure one index build. The zero value of every optional
// field selects the documented default.
type Options struct {
	// Name is the catalog name of the index (catalog.CheckName).
	Name string
	// Source is the source table: a Parquet file or folder, as a local
	// path, file:// URL or s3:// URL.
	Source string
	// VectorField names the list<float>/list<double> vector column.
	VectorField string
	// KeyFields is the ordered source key.
	KeyFields []string
	// Metric is l2_squared (default) or cosine.
	Metric string
	// NList is the number of IVF lists C; 0 selects DefaultNList(N).
	NList int
	// Roots is the number of root centroids; 0 selects ivf.DefaultRoots(C).
	Roots int
	// Encoding is the posting encoding: lvq8 (default), lvq4 or source.
	Encoding string
	// Seed seeds sampling and k-means (default DefaultSeed). Equal sources,
	// options and seeds give byte-identical index tables.
	Seed uint64
	// SampleRows is the training sample size; 0 selects
	// min(N, max(C·DefaultSamplePerList, 10000), DefaultSampleBytes/(4·D)),
	// never fewer than C.
	SampleRows int
	// Iterations bounds Lloyd iterations per k-means run (0: ivf default).
	Iterations int
	// ReuseCentroids is auto (default: reuse a centroid artifact of an index
	// over the same exact source state and descriptor) or never.
	ReuseCentroids string
	// Workers bounds parallelism; 0 selects GOMAXPROCS. It never changes
	// the result.
	Workers int
	// VectorsFile also writes the snapshot's vectors file (package vecfile;
	// profile §4.2): the exact float32 vectors in postings order, so that
	// refine reads a candidate's vector with one small ranged read when
	// the in-memory vector store does not fit. Off by default: it adds
	// N·D·4 bytes to the warehouse (and as much temporary spill), and
	// searches whose store fits never read it. Only Create writes it.
	VectorsFile bool
	// TempDir holds spill files (default os.TempDir()).
	TempDir string
	// Progress receives stage progress; nil reports nothing.
	Progress Progress
	// Now returns the current time (default time.Now), for metadata
	// timestamps.
	Now func() time.Time
}

// withDefaults returns a copy of o with defaults filled in, except those
// that depend on the source (NList, SampleRows).
func (o Options) withDefaults() Options {
	if o.Metric == "" {
		o.Metric = DefaultMetric
	}
	if o.Encoding == "" {
		o.Encoding = DefaultEncoding
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.ReuseCentroids == "" {
		o.ReuseCentroids = ReuseAuto
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Progress == nil {
		o.Progress = nopProgress{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Validate reports every invalid field at once, each problem naming the
// field (and the command-line flag that sets it).
func (o Options) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if err := catalog.CheckName(o.Name); err != nil {
		errs = append(errs, fmt.Errorf("name: %w", err))
	}
	if o.Source == "" {
		bad("source (--source)", "required")
	}
	if o.VectorField == "" {
		bad("vector-field (--vector-field)", "required")
	}
	if len(o.KeyFields) == 0 {
		bad("key-fields (--key-fields)", "at least one key field is required")
	}
	seen := map[string]bool{}
	for i, k := range o.KeyFields {
		switch {
		case strings.TrimSpace(k) == "":
			bad("key-fields (--key-fields)", "field %d is empty", i+1)
		case seen[k]:
			bad("key-fields (--key-fields)", "%q is listed twice", k)
		case k == o.VectorField:
			bad("key-fields (--key-fields)", "%q is the vector field; a vector cannot be a key", k)
		}
		seen[k] = true
	}
	switch o.Metric {
	case "", metadata.MetricL2Squared, metadata.MetricCosine:
	default:
		bad("metric (--metric)", "%q is not l2_squared or cosine", o.Metric)
	}
	switch o.Encoding {
	case "", metadata.EncodingLVQ8, metadata.EncodingLVQ4, metadata.EncodingSource:
	default:
		bad("encoding (--encoding)", "%q is not lvq8, lvq4 or source", o.Encoding)
	}
	if o.NList < 0 || o.NList > math.MaxInt32 {
		bad("nlist (--nlist)", "%d is out of range [1, 2147483647] (0 selects the default)", o.NList)
	}
	if o.Roots < 0 {
		bad("roots (--roots)", "%d is negative", o.Roots)
	}
	if o.NList > 0 && o.Roots > o.NList {
		bad("roots (--roots)", "%d roots exceed nlist %d", o.Roots, o.NList)
	}
	if o.SampleRows < 0 {
		bad("sample-rows (--sample-rows)", "%d is negative", o.SampleRows)
	}
	if o.NList > 0 && o.SampleRows > 0 && o.SampleRows < o.NList {
		bad("sample-rows (--sample-rows)", "%d is fewer than nlist %d", o.SampleRows, o.NList)
	}
	if o.Iterations < 0 {
		bad("iterations", "%d is negative", o.Iterations)
	}
	switch o.ReuseCentroids {
	case "", ReuseAuto, ReuseNever:
	default:
		bad("reuse-centroids (--reuse-centroids)", "%q is not auto or never", o.ReuseCentroids)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrOptions, errors.Join(errs...))
}

// DefaultNList is the nlist chosen for n rows: round(4·√n), but no more
// than n/MinRowsPerList so that every list is trained on enough rows, and
// at least 1.
func DefaultNList(n int64) int {
	c := int(math.Round(4 * math.Sqrt(float64(n))))
	c = min(c, int(min(n/MinRowsPerList, math.MaxInt32)))
	return max(1, c)
}

// DefaultSampleRows is the training sample size for n rows of dimension dim
// and nlist lists.
func DefaultSampleRows(n int64, dim, nlist int) int {
	s := max(nlist*DefaultSamplePerList, 10000)
	s = min(s, DefaultSampleBytes/(4*max(dim, 1)))
	s = max(s, nlist)
	return int(min(int64(s), n))
}
