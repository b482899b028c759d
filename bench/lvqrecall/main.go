// Command lvqrecall measures how well LVQ codes alone rank a data set: for
// each query it scores every base vector exhaustively (no IVF lists, so
// routing plays no part) by its LVQ4 and LVQ8 code distance, keeps the
// refine·k best, re-ranks them exactly, and prints recall@k against exact
// l2 ground truth. It bounds what an index of that encoding can reach at
// any nprobe with that refine factor, and so tells an encoding defect (an
// index below this bound) from quantization noise (an index at it).
//
//	lvqrecall [-k 10] [-queries 100] [-refine 0,2,4,8,16] BASE.fvecs QUERIES.fvecs
//
// The base is held in memory (D·4 bytes a row plus its codes); use a sample
// of a larger set, e.g. the first 200,000 rows of `mkdata mixture`.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/parqdb/parqdb/internal/fvecs"
	"github.com/parqdb/parqdb/lvq"
)

func main() {
	k := flag.Int("k", 10, "neighbours per query")
	nq := flag.Int("queries", 100, "queries to run (from the start of QUERIES)")
	refine := flag.String("refine", "0,2,4,8,16", "refine factors (0: rank by code distance alone)")
	flag.Parse()
	if flag.NArg() != 2 || *k < 1 || *nq < 1 {
		fmt.Fprintln(os.Stderr, "usage: lvqrecall [-k 10] [-queries 100] [-refine 0,2,4,8,16] BASE.fvecs QUERIES.fvecs")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Arg(1), *k, *nq, *refine); err != nil {
		fmt.Fprintln(os.Stderr, "lvqrecall:", err)
		os.Exit(1)
	}
}

func run(basePath, queryPath string, k, nq int, refineList string) error {
	var factors []int
	for _, f := range strings.Split(refineList, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || r < 0 {
			return fmt.Errorf("-refine: %q is not a non-negative integer", f)
		}
		factors = append(factors, r)
	}
	base, err := fvecs.Read(basePath, 0)
	if err != nil {
		return err
	}
	qs, err := fvecs.Read(queryPath, nq)
	if err != nil {
		return err
	}
	if len(base) < k || len(qs) == 0 {
		return fmt.Errorf("%s: %d rows and %s: %d queries; need at least k rows and one query", basePath, len(base), queryPath, len(qs))
	}
	d := len(base[0])
	if len(qs[0]) != d {
		return fmt.Errorf("%s has dimension %d, %s has %d", basePath, d, queryPath, len(qs[0]))
	}
	// (as the reader it had: every vector of a file the first's dimension, at most 65,536)
	for _, f := range []struct {
		path string
		vs   [][]float32
	}{{basePath, base}, {queryPath, qs}} {
		for i, v := range f.vs {
			if len(v) != d || d > 1<<16 {
				return fmt.Errorf("%s: vector %d has dimension %d", f.path, i, len(v))
			}
		}
	}
	fmt.Printf("lvqrecall: %d base rows × %d, %d queries, k %d (exhaustive: every row scored)\n", len(base), d, len(qs), k)
	fmt.Printf("%6s %7s %10s %14s %12s\n", "bits", "refine", "recall@k", "mean_scale", "nn_dist")
	for _, r := range measure(base, qs, k, factors) {
		fmt.Printf("%6d %7d %10.4f %14.4g %12.4g\n", r.bits, r.refine, r.recall, r.meanScale, r.nnDist)
	}
	return nil
}

// result is the recall of one encoding and refine factor.
type result struct {
	bits, refine int
	recall       float64
	meanScale    float64 // mean LVQ scale (code step) over the base rows
	nnDist       float64 // mean exact squared distance to the nearest row
}

// measure scores every base row by its LVQ4 and LVQ8 code distance for
// each query and returns recall@k per encoding and refine factor (0: the
// code distance's k best; r: the r·k best re-ranked exactly).
func measure(base, qs [][]float32, k int, factors []int) []result {
	d := len(base[0])
	exact := make([]float32, len(base))
	gts := make([][]int, len(qs))
	var nn float64
	for qi, q := range qs {
		for i, x := range base {
			exact[i] = l2(q, x)
		}
		gts[qi] = best(exact, k)
		nn += float64(exact[gts[qi][0]])
	}
	nn /= float64(len(qs))
	var out []result
	for _, bits := range []int{4, 8} {
		cl := lvq.CodeLen(bits, d)
		codes := make([]byte, len(base)*cl)
		offs := make([]float32, len(base))
		scales := make([]float32, len(base))
		var meanScale float64
		for i, x := range base {
			c := codes[i*cl : (i+1)*cl]
			if bits == 4 {
				offs[i], scales[i] = lvq.Encode4(c, x)
			} else {
				offs[i], scales[i] = lvq.Encode8(c, x)
			}
			meanScale += float64(scales[i])
		}
		meanScale /= float64(len(base))
		approx := make([]float32, len(base))
		hits := make([]int, len(factors))
		for qi, q := range qs {
			lq := lvq.NewQuery(q)
			if bits == 4 {
				lq.L2Sq4Batch(codes, offs, scales, approx)
			} else {
				lq.L2Sq8Batch(codes, offs, scales, approx)
			}
			for fi, r := range factors {
				var top []int
				if r == 0 {
					top = best(approx, k)
				} else {
					cands := best(approx, min(r*k, len(base)))
					ds := make([]float32, len(cands))
					for j, c := range cands {
						ds[j] = l2(q, base[c])
					}
					for _, j := range best(ds, k) {
						top = append(top, cands[j])
					}
				}
				for _, t := range top {
					if slices.Contains(gts[qi], t) {
						hits[fi]++
					}
				}
			}
		}
		for fi, r := range factors {
			out = append(out, result{bits: bits, refine: r, recall: float64(hits[fi]) / float64(k*len(qs)), meanScale: meanScale, nnDist: nn})
		}
	}
	return out
}

// best returns the indexes of the n smallest values of ds, nearest first
// (ties by index).
func best(ds []float32, n int) []int {
	idx := make([]int, len(ds))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if ds[a] != ds[b] {
			if ds[a] < ds[b] {
				return -1
			}
			return 1
		}
		return a - b
	})
	return idx[:n]
}

func l2(a, b []float32) float32 {
	var s float32
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}
