package calibrate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Defaults of Config.
const (
	// DefaultQueries is the number of source rows used as queries: enough
	// for a standard error of about 0.003 on recall@10 near 0.95 (3,000
	// neighbour pairs), few enough that calibrating Fashion-MNIST (60k rows)
	// takes seconds.
	DefaultQueries = 300
	// DefaultK is the k of the recall calibrated (recall@10).
	DefaultK = 10
	// DefaultSeed seeds the row sample, so that every run on the same
	// snapshot picks the same rows.
	DefaultSeed = 0x70617271_64620001
	// StopRecall ends the nprobe sweep of one refine level: once a setting
	// reaches it, larger nprobe cannot change a pick.
	StopRecall = 0.9995
)

// DefaultNProbes is the nprobe grid (capped at nlist, which is always
// measured last when it is below the grid's end).
// Steps grow by at most about 25% so that the pick lands within 1.25× of
// the cheapest nprobe that meets a target.
var DefaultNProbes = []int{1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128,
	160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1024, 1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096}

// DefaultRefines is the refine grid for quantised encodings. Refine 1 is
// left out: it re-orders the same K candidates, so it cannot raise recall.
var DefaultRefines = []int{0, 2, 4, 8}

// Plateau ends the nprobe sweep of one refine level when this many
// consecutive larger nprobe found no additional neighbour: the encoding's
// own error, not routing, limits recall there (LVQ8 without refine tops
// out below 1), and scanning up to nlist would only cost time.
const Plateau = 2

// Counts is the work of a batch of searches, from query.Stats.
type Counts struct {
	Routing    int64 // routing distances (roots and leaves)
	Candidates int64 // postings rows scored
	Refined    int64 // candidates re-scored with exact vectors
}

// Weights turn Counts into a cost, in units of one LVQ8 distance
// computation over the index's dimension. They are measured ratios
// (docs/benchmarks.md, "Search by target recall"), not timings: a
// deterministic cost model ranks settings the same way on a loaded and on
// a quiet machine, and makes the calibration reproducible.
type Weights struct {
	Routing, Candidate, Refined float64
}

// WeightsFor returns the cost weights of an encoding ("lvq8", "lvq4",
// "source"). A refined candidate costs about 15 scanned ones: measured with
// parqdb bench as the queries per CPU-second of refine 2 against refine 0
// at equal nprobe, on Fashion-MNIST (D = 784) and GloVe (D = 50) alike
// (docs/benchmarks.md, "Search by target recall"): it gathers the exact
// vector from memory at random and scores it in float32 and float64. The
// source encoding scans float32 vectors (four times the bytes of LVQ8).
func WeightsFor(encoding string) Weights {
	switch encoding {
	case "lvq4":
		return Weights{Routing: 1, Candidate: 0.6, Refined: 15}
	case "source":
		return Weights{Routing: 1, Candidate: 1.5, Refined: 15}
	default:
		return Weights{Routing: 1, Candidate: 1, Refined: 15}
	}
}

// Cost is the cost of c under w.
func (w Weights) Cost(c Counts) float64 {
	return w.Routing*float64(c.Routing) + w.Candidate*float64(c.Candidates) + w.Refined*float64(c.Refined)
}

// Searcher is what Run needs from an open index snapshot. Keys are the
// encoded source keys, compared as strings. Implementations must be
// deterministic: the same call returns the same answer.
type Searcher interface {
	// Rows is the number of source rows (ordinals 0…Rows-1).
	Rows() int64
	// NList is the number of lists.
	NList() int
	// Encoding is the postings encoding ("lvq8", "lvq4", "source").
	Encoding() string
	// RowsAt returns the vectors and encoded keys of the source rows ords.
	RowsAt(ctx context.Context, ords []int64) (vecs [][]float32, keys []string, err error)
	// Exact returns the keys of the exact k nearest rows of every query,
	// nearest first.
	Exact(ctx context.Context, qs [][]float32, k int) ([][]string, error)
	// Search returns the keys of the approximate k nearest rows of every
	// query with the given nprobe and refine, nearest first, and the work
	// done for all of them.
	Search(ctx context.Context, qs [][]float32, k, nprobe, refine int) ([][]string, Counts, error)
}

// Config tunes Run. Zero fields take the defaults above.
type Config struct {
	Queries int
	K       int
	Seed    uint64
	NProbes []int
	Refines []int
}

func (c Config) withDefaults(s Searcher) Config {
	if c.Queries <= 0 {
		c.Queries = DefaultQueries
	}
	if c.K <= 0 {
		c.K = DefaultK
	}
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	if c.NProbes == nil {
		c.NProbes = DefaultNProbes
	}
	if c.Refines == nil {
		c.Refines = DefaultRefines
		if s.Encoding() == "source" {
			// Exact distances already: refine changes nothing.
			c.Refines = []int{0}
		}
	}
	n := s.Rows()
	c.Queries = int(min(int64(c.Queries), n))
	c.K = int(min(int64(c.K), n-1))
	return c
}

// Sample returns n distinct ordinals in [0, rows), in ascending order,
// drawn by a PCG generator seeded with seed: the same arguments always give
// the same rows.
func Sample(rows int64, n int, seed uint64) []int64 {
	if int64(n) >= rows {
		out := make([]int64, rows)
		for i := range out {
			out[i] = int64(i)
		}
		return out
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	seen := make(map[int64]bool, n)
	out := make([]int64, 0, n)
	for len(out) < n {
		o := r.Int64N(rows)
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	slices.Sort(out)
	return out
}

// Run calibrates the index behind s: it samples Config.Queries source rows,
// computes their exact K nearest other rows, then measures recall@K and
// cost for every refine of the grid and every nprobe of the grid in
// increasing order, until recall reaches StopRecall, stays flat for Plateau
// steps, costs more than a measured point that reached StopRecall (no
// target can pick it), or nprobe reaches nlist. The returned Calibration has Points and the run's parameters; the
// caller fills the binding (IndexUUID, SnapshotID, Source).
func Run(ctx context.Context, s Searcher, cfg Config) (*Calibration, error) {
	if s.Rows() < 2 {
		return nil, fmt.Errorf("%w: the index has %d rows", ErrTooFewRows, s.Rows())
	}
	cfg = cfg.withDefaults(s)
	ords := Sample(s.Rows(), cfg.Queries, cfg.Seed)
	qs, own, err := s.RowsAt(ctx, ords)
	if err != nil {
		return nil, err
	}
	// Ask for one more than K and drop the query's own row: the sample
	// rows stand for queries that are not in the index.
	exact, err := s.Exact(ctx, qs, cfg.K+1)
	if err != nil {
		return nil, err
	}
	truth := make([]map[string]bool, len(qs))
	for i, hits := range exact {
		truth[i] = make(map[string]bool, cfg.K)
		for _, k := range withoutOwn(hits, own[i], cfg.K) {
			truth[i][k] = true
		}
	}
	w := WeightsFor(s.Encoding())
	nlist := s.NList()
	probes := nprobeGrid(cfg.NProbes, nlist)
	c := &Calibration{
		FormatVersion: FormatVersion,
		Encoding:      s.Encoding(),
		K:             cfg.K,
		Queries:       len(qs),
		Seed:          cfg.Seed,
		NList:         nlist,
		Weights:       w,
	}
	top := math.Inf(1) // cheapest cost measured with recall ≥ StopRecall
	for _, refine := range cfg.Refines {
		flat, last := 0, -1.0
		for _, np := range probes {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			got, counts, err := s.Search(ctx, qs, cfg.K+1, np, refine)
			if err != nil {
				return nil, fmt.Errorf("calibrate nprobe %d refine %d: %w", np, refine, err)
			}
			per := make([]float64, len(qs))
			for i, hits := range got {
				found := 0
				for _, k := range withoutOwn(hits, own[i], cfg.K) {
					if truth[i][k] {
						found++
					}
				}
				per[i] = float64(found) / float64(max(len(truth[i]), 1))
			}
			mean, se := meanSE(per)
			pt := Point{
				NProbe: np, Refine: refine,
				Recall: round6(mean), StdErr: round6(se),
				Cost: math.Round(w.Cost(counts)/float64(len(qs))*10) / 10,
			}
			c.Points = append(c.Points, pt)
			if mean >= StopRecall {
				top = min(top, pt.Cost)
				break
			}
			if pt.Cost >= top {
				break
			}
			// Gains below one neighbour in the whole sample are no gain.
			if mean-last < 0.5/float64(len(qs)*cfg.K) {
				if flat++; flat >= Plateau {
					break
				}
			} else {
				flat = 0
			}
			last = mean
		}
	}
	return c, nil
}

// withoutOwn returns the first k keys of hits other than own (all of them
// but the last when own is absent and hits holds k+1).
func withoutOwn(hits []string, own string, k int) []string {
	out := make([]string, 0, k)
	for _, h := range hits {
		if h == own || len(out) == k {
			continue
		}
		out = append(out, h)
	}
	return out
}

func nprobeGrid(grid []int, nlist int) []int {
	var out []int
	for _, np := range grid {
		if np >= nlist {
			break
		}
		out = append(out, np)
	}
	return append(out, nlist)
}

func meanSE(xs []float64) (mean, se float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var v float64
	for _, x := range xs {
		v += (x - mean) * (x - mean)
	}
	v /= float64(len(xs) - 1)
	return mean, math.Sqrt(v / float64(len(xs)))
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }
