package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/internal/ivecs"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
)

func init() { subcommands = append(subcommands, newBenchCmd) }

type benchFlags struct {
	queries, queryColumn, groundTruth string
	cacheSize                         string
	k                                 int
	nprobes, refines                  string
	recalls                           string
	plot                              string
	threads, maxQueries, coldQueries  int
	minTime                           time.Duration
	snapshot                          int64
	format                            string
	join, quiet                       bool
	columns                           []string
	where                             string
}

func newBenchCmd(g *globals) *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench NAME --queries FILE [--ground-truth FILE] [-k 10] [--nprobe 1,2,4,…] [--refine 0,…] [--plot out.png]",
		Short: "Measure recall@k, QPS, candidates and bytes per query over a range of nprobe (and refine) settings",
		Long: `bench searches every query of --queries at each nprobe (and refine) setting
and prints, per setting: recall@k against the exact answer, queries per second
on one thread and on --threads threads, candidates scored per query, and the
postings bytes and requests per query with a cold cache (and, when refine
or the source encoding read exact vectors, the bytes and requests of the
index's vectors file, or the rows read from source pages without one; a
hint line follows when the warm passes read such rows and the index has no
vectors file). qps_1t_cpu divides by the CPU time of the one-thread pass
instead of wall time (Linux), which stays meaningful on a shared, busy
machine; qps_nt_cpu divides by the process CPU time of the --threads pass
(SearchBatch: with --threads 1, the batch mode on one core). With --threads
above 1, JSON's qps_nt_single is the wall-clock rate of single queries from
that many callers at once (Search, one query per call).

Every setting runs a warm-up pass first: QPS is for a warm index. Each
timed pass over the queries is then repeated until --min-time (1s) has
passed, and each QPS is that of the median pass (passes_1t and passes_nt
in JSON count them), so that a pass of a few hundred microseconds is not
at the mercy of one time slice; --min-time 0 runs each pass once.

The cold pass searches the first --cold-queries queries (100) on an index
with no cache and no vector store; --cold-queries 0 skips it and its
columns. With refine (or the source encoding) and no vectors file, the cold
pass reads every such exact vector from source pages: a warning says so
before it runs (index create --vectors-file avoids it).

The exact answer is computed by brute force over the source vectors unless
--ground-truth gives it as an .ivecs file of source row numbers (0-based, in
source file and row order, k or more per query); a file in which, on most of
16 sampled queries, a search finds a row more than 1% nearer than the row it
names nearest is refused (the ground truth of other queries, or another metric). Timed searches skip the join
(the result keys only, as FAISS returns ids); --join adds, per setting, a joined warm-up
pass, a pass returning the key columns and a joined pass (with --columns), timed by
the process's CPU clock (qps_keys_cpu, qps_join_cpu; qps_join is the joined
pass by wall time) to show the join's cost.

--recall 0.95,0.99 adds one row per target recall, with the nprobe and
refine that the index's calibration picks for it (see search --recall); the
recall_target column marks those rows. Without --nprobe and --refine only
these rows are measured.

--plot draws recall (x) against QPS (y, log scale) as a PNG: per refine
factor the one-thread curves by wall clock and per CPU-second and the
--threads curve, each one-thread wall-clock point labelled with its
nprobe, the --recall rows as rings labelled with their target and setting,
and the legend beneath the axes.`,
		Example: `  parqdb bench words --queries examples/glove/queries-100.fvecs -k 10 --nprobe 2,8,32 --refine 0,4 --plot recall-qps.png`,
		Args:    exactArgs(1),
		RunE:    func(cmd *cobra.Command, args []string) error { return runBench(cmd, g, args[0], f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.queries, "queries", "", "file of query vectors: .fvecs, .npy or Parquet (required)")
	fl.StringVar(&f.queryColumn, "query-column", "", "vector column of a Parquet --queries file")
	fl.StringVar(&f.groundTruth, "ground-truth", "", ".ivecs file of the exact neighbours' source row numbers (default: brute force)")
	fl.IntVarP(&f.k, "k", "k", 10, "neighbours per query")
	fl.StringVar(&f.nprobes, "nprobe", "1,2,4,8,16,32,64,128", "comma-separated nprobe values")
	fl.StringVar(&f.refines, "refine", "0", "comma-separated refine factors (0: off)")
	fl.StringVar(&f.recalls, "recall", "", "comma-separated target recalls in (0, 1]: also measure the setting the index's calibration picks for each")
	fl.StringVar(&f.plot, "plot", "", "write the recall–QPS curve to this PNG file")
	fl.IntVar(&f.threads, "threads", runtime.GOMAXPROCS(0), "goroutines for the all-threads measurement")
	fl.IntVar(&f.maxQueries, "max-queries", 0, "use only the first N queries (default all)")
	fl.IntVar(&f.coldQueries, "cold-queries", 100, "queries run on an uncached index to measure bytes and requests per query (0: no cold pass)")
	fl.DurationVar(&f.minTime, "min-time", benchMinTime, "repeat each timed pass over the queries until this much time has passed and report the median pass (0: one pass)")
	fl.Int64Var(&f.snapshot, "snapshot", 0, "benchmark this retained snapshot")
	fl.StringVar(&f.format, "format", "table", "output format: table or json (one line per setting)")
	fl.BoolVar(&f.join, "join", false, "also time a keys-only and a joined pass per setting (qps_join; qps_keys_cpu and qps_join_cpu per process CPU-second)")
	fl.StringSliceVar(&f.columns, "columns", nil, "source columns joined by --join (default all)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress output")
	intRange(fl, "k", query.MinK, query.MaxK, "")
	intRange(fl, "threads", 1, maxWorkers, "")
	intRange(fl, "max-queries", 1, math.MaxInt32, "all queries")
	intRange(fl, "cold-queries", 0, math.MaxInt32, "")
	durationRange(fl, "min-time", 0, maxMinTime, "")
	intRange(fl, "snapshot", 1, math.MaxInt64, "the current snapshot")
	fl.StringVar(&f.where, "where", "", whereHelp+"; recall is measured against brute force over the matching rows")
	addCacheSizeFlag(fl, &f.cacheSize)
	return cmd
}

// benchRow is the result of one setting.
type benchRow struct {
	// Target is the --recall target whose calibrated setting this row
	// measures (absent for the rows of the nprobe × refine sweep).
	Target     float64 `json:"recall_target,omitempty"`
	NProbe     int     `json:"nprobe"`
	Refine     int     `json:"refine"`
	Recall     float64 `json:"recall"`
	QPS1       float64 `json:"qps_1t"`
	QPSCPU     float64 `json:"qps_1t_cpu,omitempty"` // queries per CPU-second of the one-thread pass
	QPSN       float64 `json:"qps_nt"`
	QPSNCPU    float64 `json:"qps_nt_cpu,omitempty"`    // queries per process CPU-second of the --threads pass (SearchBatch)
	QPSNSingle float64 `json:"qps_nt_single,omitempty"` // queries per second (wall) of --threads callers of Search at once (threads > 1)
	Threads    int     `json:"threads"`
	QPSJoin    float64 `json:"qps_join,omitempty"`
	QPSKeysCPU float64 `json:"qps_keys_cpu,omitempty"` // queries per process CPU-second of a pass returning the key columns
	QPSJoinCPU float64 `json:"qps_join_cpu,omitempty"` // queries per process CPU-second of the joined pass
	// Passes1 and PassesN are how many timed passes over the queries the
	// one-thread and the all-thread measurements ran (--min-time); each
	// QPS is that of the median pass.
	Passes1       int     `json:"passes_1t"`
	PassesN       int     `json:"passes_nt"`
	Candidates    float64 `json:"candidates_per_query"`
	LeafDistances float64 `json:"leaf_distances_per_query"`
	// ColdQueries is how many queries the cold pass searched (0: none,
	// and the cold measures below are not measured).
	ColdQueries int `json:"cold_queries"`
	// ColdBytes and ColdRequests are the postings' (query.Stats.BytesRead
	// and Requests) on the uncached index; the exact vectors that refine
	// and the source encoding read there are counted apart: the vectors
	// file's reads (ColdVecFileBytes, ColdVecFileRequests) and the rows
	// read from source pages (ColdSourceVectorRows).
	ColdBytes            float64 `json:"cold_bytes_per_query"`
	ColdRequests         float64 `json:"cold_requests_per_query"`
	ColdVecFileBytes     float64 `json:"cold_vecfile_bytes_per_query"`
	ColdVecFileRequests  float64 `json:"cold_vecfile_requests_per_query"`
	ColdSourceVectorRows float64 `json:"cold_source_vector_rows_per_query"`
	// SourceVectorRows is the rows per query of the one-thread (warm) pass
	// read from source pages because neither the vector store nor a
	// vectors file held them.
	SourceVectorRows float64 `json:"source_vector_rows_per_query"`
	// exactPlans counts the one-thread pass's queries answered by a
	// filter's exact plan (for the --vectors-file hint).
	exactPlans int64
}

// parseInts parses the comma-separated integers of --flag, each in
// [lo, hi].
func parseInts(flag, s string, lo, hi int) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < lo || n > hi {
			return nil, usagef("--%s: %q is outside the allowed range [%d, %d]", flag, p, lo, hi)
		}
		out = append(out, n)
	}
	return out, nil
}

func runBench(cmd *cobra.Command, g *globals, name string, f benchFlags) error {
	if err := applyCacheSize(f.cacheSize); err != nil {
		return err
	}
	if f.queries == "" {
		return usagef("--queries is required")
	}
	switch f.format {
	case "table", "json":
	default:
		return usagef("--format must be table or json, not %q", f.format)
	}
	where, err := parseWhere(f.where)
	if err != nil {
		return err
	}
	if where != nil && f.groundTruth != "" {
		return usagef("--ground-truth is unfiltered; with --where the ground truth is brute force over the matching rows")
	}
	nprobes, err := parseInts("nprobe", f.nprobes, query.MinNProbe, query.MaxNProbe)
	if err != nil {
		return err
	}
	refines, err := parseInts("refine", f.refines, query.MinRefine, query.MaxRefine)
	if err != nil {
		return err
	}
	targets, err := parseRecalls(f.recalls)
	if err != nil {
		return err
	}
	if targets != nil && !cmd.Flags().Changed("nprobe") && !cmd.Flags().Changed("refine") {
		nprobes, refines = nil, nil
	}
	qs, err := readQueries(f.queries, f.queryColumn)
	if err != nil {
		return err
	}
	if f.maxQueries > 0 && len(qs) > f.maxQueries {
		qs = qs[:f.maxQueries]
	}
	return runLong(cmd, f.quiet, func(ctx context.Context, p progressReporter) error {
		return benchIndex(ctx, cmd, g, name, f, where, qs, nprobes, refines, targets, p)
	})
}

// parseRecalls parses --recall: comma-separated targets in (0, 1].
func parseRecalls(s string) ([]float64, error) {
	if s == "" {
		return nil, nil
	}
	var out []float64
	for _, p := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(x > 0 && x <= 1) {
			return nil, usagef("--recall: %q is not a target recall in (0, 1], such as 0.95", p)
		}
		out = append(out, x)
	}
	return out, nil
}

// benchIndex measures every setting; p shows a stage per setting.
func benchIndex(ctx context.Context, cmd *cobra.Command, g *globals, name string, f benchFlags, where *filter.Predicate, qs [][]float32,
	nprobes, refines []int, targets []float64, p progressReporter) error {
	e, err := openEnv(ctx, g)
	if err != nil {
		return err
	}
	defer e.Close()
	env := query.Env{Warehouse: e.wh, Catalog: e.cat}
	// No row cache: qps_join measures reading the joined rows every time.
	ix, err := query.Open(ctx, env, name, query.OpenOptions{SnapshotID: f.snapshot, RowCacheRows: -1})
	if err != nil {
		return err
	}
	defer ix.Close()
	warnStale(cmd.ErrOrStderr(), ix)
	if err := checkColumns(ix, f.columns); err != nil {
		return err
	}
	// The cold index (no cache, no vector store) serves the cold pass;
	// --cold-queries 0 runs none.
	var cold *query.Index
	if f.coldQueries > 0 {
		if cold, err = query.Open(ctx, env, name, query.OpenOptions{SnapshotID: f.snapshot, CacheBytes: -1, VectorCacheBytes: -1, RowCacheRows: -1}); err != nil {
			return err
		}
		defer cold.Close()
	}

	// One untimed pass over the filter's columns first, so that neither
	// the bitmap build nor the plain scan below pays the first reads of
	// the source (footers, page indexes, the file cache): they are
	// compared warm.
	if where != nil {
		if _, err := ix.ScanFilterColumns(ctx, where); err != nil {
			return err
		}
	}
	var finfo query.FilterInfo
	buildCPU, err := processCPU(func() (err error) {
		finfo, err = prepareWhere(ctx, ix, where)
		return err
	})
	if err != nil {
		return err
	}
	// The plain scan of the filter's columns that the bitmap's cost is
	// compared with (issue 12: a new predicate costs at most one pass).
	var scanWall, scanCPU time.Duration
	if where != nil {
		start := time.Now()
		if scanCPU, err = processCPU(func() error { _, err := ix.ScanFilterColumns(ctx, where); return err }); err != nil {
			return err
		}
		scanWall = time.Since(start)
	}
	start := time.Now()
	p.Start("truth", 0)
	truth, err := benchTruth(ctx, ix, qs, f, where)
	if err != nil {
		return err
	}
	p.End("truth", time.Since(start))
	stderr := cmd.ErrOrStderr()
	snap := ix.Snapshot()
	fmt.Fprintf(stderr, "bench %s: %d queries, k %d, nlist %d, %s, %s, kernels %s, %d threads\n",
		name, len(qs), f.k, ix.NList(), snap.Metric, snap.Parameters["posting_encoding"], query.KernelImpl(), f.threads)
	if where != nil {
		fmt.Fprintf(stderr, "where %s: %d of %d rows match (%.3f%%); bitmap built in %.3f s (CPU %.3f s), %d row groups read, %d skipped, %d pages decoded, %d skipped by the page index; a plain scan of its columns takes %.3f s (CPU %.3f s)\n",
			where, finfo.Rows, finfo.SourceRows, 100*float64(finfo.Rows)/float64(max(finfo.SourceRows, 1)),
			finfo.Build.Seconds(), buildCPU.Seconds(), finfo.RowGroupsRead, finfo.RowGroupsSkipped, finfo.PagesRead, finfo.PagesSkipped, scanWall.Seconds(), scanCPU.Seconds())
	}

	var rows []benchRow
	coldWarned := false
	// measure runs one setting as one progress stage counting searches:
	// the cold queries, then the warm-up, one-thread and all-thread
	// passes, and the joined warm-up, keys-only and joined passes.
	// target is the --recall target whose setting opts is (0 for the
	// sweep).
	measure := func(stage string, target float64, opts query.Options) (benchRow, error) {
		if err := ix.Warm(ctx, opts); err != nil {
			return benchRow{}, err
		}
		if !coldWarned && cold != nil {
			coldWarned = coldExactVectorsWarning(ctx, stderr, cold, f.coldQueries, opts)
		}
		passes := 3 // warm-up, one thread, --threads
		if f.threads > 1 {
			passes++ // --threads callers
		}
		if f.join {
			passes += 3
		}
		start := time.Now()
		p.Start(stage, int64(min(f.coldQueries, len(qs))+passes*len(qs)))
		r, err := benchSetting(ctx, ix, cold, qs, truth, opts, f, p)
		if err != nil {
			return r, err
		}
		p.End(stage, time.Since(start))
		r.Target = target
		if f.format == "json" {
			b, _ := json.Marshal(r)
			fmt.Fprintln(cmd.OutOrStdout(), string(b))
		}
		return r, nil
	}
	for _, rf := range refines {
		for _, np := range nprobes {
			opts := query.Options{K: f.k, NProbe: np, Refine: rf, NoRows: true, Filter: where}
			r, err := measure(fmt.Sprintf("nprobe %d refine %d", np, rf), 0, opts)
			if err != nil {
				return err
			}
			rows = append(rows, r)
		}
	}
	sweep := len(rows)
	for _, target := range targets {
		cstart := time.Now()
		pt, met, err := ix.RecallSetting(ctx, target)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "recall %v: nprobe %d refine %d (calibrated recall %.4f ± %.4f%s; calibration ready in %.3f s)\n",
			target, pt.NProbe, pt.Refine, pt.Recall, pt.StdErr, map[bool]string{true: "", false: ", below the target: the highest measured"}[met], time.Since(cstart).Seconds())
		opts := query.Options{K: f.k, NProbe: pt.NProbe, Refine: pt.Refine, NoRows: true, Filter: where}
		r, err := measure(fmt.Sprintf("recall %v", target), target, opts)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}
	if f.format == "table" {
		writeBenchTable(cmd.OutOrStdout(), rows, f)
	}
	// The hint considers the warm passes: the cold index holds no
	// vector store by design.
	// Settings answered by a filter's exact plan read source rows that a
	// vectors file would not serve.
	var srcRows float64
	for _, r := range rows {
		if r.exactPlans == 0 {
			srcRows = max(srcRows, r.SourceVectorRows)
		}
	}
	vectorsFileHint(ctx, stderr, ix, srcRows, false)
	if f.plot != "" && len(rows) > 0 {
		title := fmt.Sprintf("%s: recall@%d vs QPS (%d queries, nlist %d, %s)", name, f.k, len(qs), ix.NList(), snap.Parameters["posting_encoding"])
		if err := plotBench(f.plot, title, f.k, rows[:sweep], rows[sweep:]); err != nil {
			return err
		}
	}
	return nil
}

// coldExactVectorsWarning warns on w, and reports whether it did, when
// the cold pass of a setting with opts reads exact vectors from source
// pages: refine (or the source encoding) needs candidates' exact
// vectors, the cold index has no vector store (nor any cache) by design,
// and without a vectors file (profile §4.2) each such vector costs the
// read and decode of the source page that holds it, which dominates a
// cold pass over a large source.
// With a vectors file the cold pass reads it with small ranged reads
// instead (the cold_vecfile columns), which is what the pass is meant to
// measure, so nothing is printed. A vectors file that cannot be opened
// prints nothing: the warning is advisory.
func coldExactVectorsWarning(ctx context.Context, w io.Writer, cold *query.Index, coldQueries int, opts query.Options) bool {
	var why, what string
	switch {
	case opts.Refine > 0:
		why, what = fmt.Sprintf("refine %d", opts.Refine), "each refined candidate's"
	case cold.Snapshot().Parameters["posting_encoding"] == "source":
		why, what = "the source posting encoding", "every candidate's"
	default:
		return false
	}
	if _, ok, err := cold.VectorsFileSize(ctx); err != nil || ok {
		return false
	}
	fmt.Fprintf(w, "warning: the cold pass (--cold-queries %d: an uncached index, no vector store) with %s reads %s exact vector from the source files, decoding the Parquet page that holds it, because index %q has no vectors file: on a large source this can take far longer than the timed passes (cold_src_vec_rows/q counts the rows); `parqdb index create %s … --vectors-file` serves them with small ranged reads, and --cold-queries 0 skips the cold pass\n",
		coldQueries, why, what, cold.Name(), cold.Name())
	return true
}

// benchTruth returns the encoded keys of each query's exact k nearest rows.
func benchTruth(ctx context.Context, ix *query.Index, qs [][]float32, f benchFlags, where *filter.Predicate) ([][]string, error) {
	out := make([][]string, len(qs))
	if f.groundTruth != "" {
		ids, err := ivecs.Read(f.groundTruth)
		if err != nil {
			return nil, err
		}
		if len(ids) < len(qs) {
			return nil, fmt.Errorf("%s: %d rows of ground truth for %d queries", f.groundTruth, len(ids), len(qs))
		}
		for i := range qs {
			if len(ids[i]) < f.k {
				return nil, fmt.Errorf("%s: row %d has %d neighbours, k is %d", f.groundTruth, i, len(ids[i]), f.k)
			}
		}
		if err := checkTruth(ctx, ix, qs, ids, f.groundTruth); err != nil {
			return nil, err
		}
		for i := range qs {
			for _, id := range ids[i][:f.k] {
				key, err := ix.KeyAt(ctx, int64(id))
				if err != nil {
					return nil, fmt.Errorf("%s: row %d: %w", f.groundTruth, i, err)
				}
				out[i] = append(out[i], string(key))
			}
		}
		return out, nil
	}
	var hits [][]query.Hit
	var err error
	if where != nil {
		hits, err = ix.ExactFilteredBatch(ctx, qs, f.k, f.threads, where)
	} else {
		hits, err = ix.ExactBatch(ctx, qs, f.k, f.threads)
	}
	if err != nil {
		return nil, fmt.Errorf("ground truth by brute force: %w (give --ground-truth)", err)
	}
	for i, hs := range hits {
		for _, h := range hs {
			out[i] = append(out[i], string(h.Key))
		}
	}
	return out, nil
}

// truthSample is how many queries checkTruth checks.
const truthSample = 16

// checkTruth checks a --ground-truth file against the queries it is to
// answer: on up to truthSample queries spread over the file, a search (k 1,
// exact distances) must not find a row more than 1 % nearer than the row
// the file names nearest. A file of other queries (or of another metric)
// fails on nearly every query, an exact one on none: ties and rounding are
// far inside the margin. It fails when more than half fail.
func checkTruth(ctx context.Context, ix *query.Index, qs [][]float32, ids [][]int32, path string) error {
	n := min(len(qs), truthSample)
	opts := query.Options{K: 1, NProbe: min(8, ix.NList()), NoRows: true}
	if ix.Snapshot().Parameters["posting_encoding"] != metadata.EncodingSource {
		opts.Refine = 2 // the hit's distance exact
	}
	bad, example := 0, ""
	for j := range n {
		i := j * len(qs) / n
		if len(ids[i]) == 0 {
			continue
		}
		d, err := ix.DistancesTo(ctx, qs[i], []int64{int64(ids[i][0])})
		if err != nil {
			return fmt.Errorf("%s: row %d: %w", path, i, err)
		}
		r, err := ix.Search(ctx, qs[i], opts)
		if err != nil {
			return fmt.Errorf("checking %s: query %d: %w", path, i, err)
		}
		if len(r.Hits) > 0 && float64(r.Hits[0].Distance) < 0.99*float64(d[0]) {
			bad++
			if example == "" {
				example = fmt.Sprintf("query %d: the file's nearest, source row %d, is at _distance %.6g; a search finds a row at %.6g",
					i, ids[i][0], d[0], r.Hits[0].Distance)
			}
		}
	}
	if 2*bad > n {
		return fmt.Errorf("%s is not the ground truth of these queries: on %d of the %d checked, a search finds a row nearer than the one it names nearest (%s); is it for other queries, another order of them, or another metric?",
			path, bad, n, example)
	}
	return nil
}

// benchMinTime is --min-time's default. The package's tests set it to 0
// (bench_test.go) so that the many in-process bench runs of other tests
// take one pass per measurement; tests of the repetition give the flag.
var benchMinTime = time.Second

// maxMinTime bounds --min-time; with maxPasses it bounds the memory
// of a timed measurement (one wall and one CPU duration per pass).
const (
	maxMinTime = time.Minute
	maxPasses  = 1_000_000
)

// passTimes is what passTimer.run measured: the number of passes and the
// median wall-clock and CPU time of one pass.
type passTimes struct {
	passes    int
	wall, cpu time.Duration
}

// passTimer repeats a timed pass over the queries until minTime of wall
// time has passed: one pass of 100 warm queries takes well under a
// millisecond, where a scheduler's time slice or a page fault is a large
// share of it, and the median of many passes is stable where one pass is
// not (issue 30).
type passTimer struct {
	minTime time.Duration
	now     func() time.Time // time.Now; tests give a fake clock
}

// run calls pass at least once and again until minTime has passed since
// the first call began (or maxPasses have run, or ctx is done), and
// returns the median wall time of a pass (by now) and the median CPU time
// that pass returned (0 when it returns 0). It advances p by units in all,
// in proportion to the time spent, so a progress line moves during a long
// measurement without any work inside the timed passes.
func (t passTimer) run(ctx context.Context, p progressReporter, units int64, pass func() (cpu time.Duration, err error)) (passTimes, error) {
	var walls, cpus []time.Duration
	var done int64
	start := t.now()
	for {
		if err := ctx.Err(); err != nil {
			return passTimes{}, err
		}
		t0 := t.now()
		cpu, err := pass()
		if err != nil {
			return passTimes{}, err
		}
		t1 := t.now()
		walls, cpus = append(walls, t1.Sub(t0)), append(cpus, cpu)
		elapsed := t1.Sub(start)
		if elapsed >= t.minTime || len(walls) >= maxPasses {
			p.Add(units - done)
			break
		}
		if n := int64(float64(units) * float64(elapsed) / float64(t.minTime)); n > done {
			p.Add(n - done)
			done = n
		}
	}
	return passTimes{passes: len(walls), wall: medianDuration(walls), cpu: medianDuration(cpus)}, nil
}

// medianDuration returns the median of ds (the mean of the middle two for
// an even count), reordering ds; 0 for none.
func medianDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	m := len(ds) / 2
	if len(ds)%2 == 1 {
		return ds[m]
	}
	return ds[m-1] + (ds[m]-ds[m-1])/2
}

// perSecond returns n queries over d as queries per second, 0 when d is 0
// (a clock the platform does not report).
func perSecond(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// benchSetting measures one setting; p counts the searches done.
// cold is nil when f.coldQueries is 0.
func benchSetting(ctx context.Context, ix, cold *query.Index, qs [][]float32, truth [][]string, opts query.Options, f benchFlags, p progressReporter) (benchRow, error) {
	r := benchRow{NProbe: opts.NProbe, Refine: opts.Refine, Threads: f.threads}
	timer := passTimer{minTime: f.minTime, now: time.Now}
	n := len(qs)
	// Cold: bytes and requests per query with no cache.
	nc := min(f.coldQueries, n)
	r.ColdQueries = nc
	var cst query.Stats
	for _, q := range qs[:nc] {
		res, err := cold.Search(ctx, q, opts)
		if err != nil {
			return r, err
		}
		cst.Add(res.Stats)
		p.Add(1)
	}
	if nc > 0 {
		r.ColdBytes = float64(cst.BytesRead) / float64(nc)
		r.ColdRequests = float64(cst.Requests) / float64(nc)
		r.ColdVecFileBytes = float64(cst.VectorFileBytes) / float64(nc)
		r.ColdVecFileRequests = float64(cst.VectorFileRequests) / float64(nc)
		r.ColdSourceVectorRows = float64(cst.SourceVectorRows) / float64(nc)
	}
	// Warm-up, then one thread: every pass searches the same queries on a
	// warm index, so each gives the same results; the last one's are kept.
	if _, err := ix.SearchBatch(ctx, qs, opts, f.threads); err != nil {
		return r, err
	}
	p.Add(int64(n))
	// Collect now what the work before (the ground truth, the previous
	// setting, the warm-up) left to the collector, so that its cycle is
	// not charged to this setting's first passes.
	runtime.GC()
	results := make([]*query.Result, n)
	one, err := timer.run(ctx, p, int64(n), func() (time.Duration, error) {
		return threadCPU(func() error {
			for i, q := range qs { // the timed loop: no lock or clock read per query
				res, err := ix.Search(ctx, q, opts)
				if err != nil {
					return fmt.Errorf("query %d: %w", i, err)
				}
				results[i] = res
			}
			return nil
		})
	})
	if err != nil {
		return r, err
	}
	r.QPS1, r.QPSCPU, r.Passes1 = perSecond(n, one.wall), perSecond(n, one.cpu), one.passes
	// All threads.
	all, err := timer.run(ctx, p, int64(n), func() (time.Duration, error) {
		return processCPU(func() error {
			_, err := ix.SearchBatch(ctx, qs, opts, f.threads)
			return err
		})
	})
	if err != nil {
		return r, err
	}
	r.QPSN, r.QPSNCPU, r.PassesN = perSecond(n, all.wall), perSecond(n, all.cpu), all.passes
	if f.threads > 1 {
		callers, err := timer.run(ctx, p, int64(n), func() (time.Duration, error) {
			g, gctx := errgroup.WithContext(ctx)
			for w := range f.threads {
				g.Go(func() error {
					for i := w; i < n; i += f.threads {
						if _, err := ix.Search(gctx, qs[i], opts); err != nil {
							return fmt.Errorf("query %d: %w", i, err)
						}
					}
					return nil
				})
			}
			return 0, g.Wait()
		})
		if err != nil {
			return r, err
		}
		r.QPSNSingle = perSecond(n, callers.wall)
	}
	if f.join {
		jopts := opts
		jopts.NoRows, jopts.Columns = false, f.columns
		// Process CPU time, keys-only pass first: the join may decode
		// on other goroutines (source reads), which a thread clock misses.
		pass := func(o query.Options) func() (time.Duration, error) {
			return func() (time.Duration, error) {
				return processCPU(func() error {
					for i, q := range qs {
						if _, err := ix.Search(ctx, q, o); err != nil {
							return fmt.Errorf("query %d: %w", i, err)
						}
					}
					return nil
				})
			}
		}
		if _, err := pass(jopts)(); err != nil { // warm-up, as for the other passes
			return r, err
		}
		p.Add(int64(n))
		kopts := opts
		kopts.NoRows, kopts.Columns = false, ix.Snapshot().SourceKeyFields
		keys, err := timer.run(ctx, p, int64(n), pass(kopts))
		if err != nil {
			return r, err
		}
		joined, err := timer.run(ctx, p, int64(n), pass(jopts))
		if err != nil {
			return r, err
		}
		r.QPSJoin = perSecond(n, joined.wall)
		if keys.cpu > 0 && joined.cpu > 0 {
			r.QPSKeysCPU, r.QPSJoinCPU = perSecond(n, keys.cpu), perSecond(n, joined.cpu)
		}
	}
	var st query.Stats
	found, want := 0, 0
	for i, res := range results {
		st.Add(res.Stats)
		set := make(map[string]bool, len(truth[i]))
		for _, k := range truth[i] {
			set[k] = true
		}
		want += len(truth[i])
		for _, h := range res.Hits {
			if set[string(h.Key)] {
				found++
			}
		}
	}
	if want > 0 {
		r.Recall = float64(found) / float64(want)
	}
	r.Candidates = float64(st.Candidates) / float64(len(qs))
	r.LeafDistances = float64(st.LeafDistances) / float64(len(qs))
	r.SourceVectorRows = float64(st.SourceVectorRows) / float64(len(qs))
	r.exactPlans = st.FilterExact
	return r, nil
}

func writeBenchTable(w io.Writer, rows []benchRow, f benchFlags) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := fmt.Sprintf("refine\tnprobe\trecall@%d\tqps_1t\tqps_1t_cpu\tqps_%dt\t", f.k, f.threads)
	if f.recalls != "" {
		hdr = "recall_target\t" + hdr
	}
	if f.join {
		hdr += "qps_join\tqps_keys_cpu\tqps_join_cpu\t"
	}
	hdr += "candidates/q\trouting_dist/q\t"
	// The cold columns only with a cold pass, the exact vectors' reads
	// only when some setting made them.
	cold := f.coldQueries > 0
	var vecFile, coldSrc, warmSrc bool
	for _, r := range rows {
		vecFile = vecFile || r.ColdVecFileRequests > 0
		coldSrc = coldSrc || r.ColdSourceVectorRows > 0
		warmSrc = warmSrc || r.SourceVectorRows > 0
	}
	srcRows := cold && (coldSrc || warmSrc)
	if cold {
		hdr += "cold_bytes/q\tcold_requests/q\t"
	}
	if vecFile {
		hdr += "cold_vecfile_bytes/q\tcold_vecfile_requests/q\t"
	}
	if srcRows {
		hdr += "cold_src_vec_rows/q\t"
	}
	if srcRows || warmSrc {
		hdr += "src_vec_rows/q\t"
	}
	fmt.Fprintln(tw, hdr)
	for _, r := range rows {
		line := fmt.Sprintf("%d\t%d\t%.4f\t%.0f\t%.0f\t%.0f\t", r.Refine, r.NProbe, r.Recall, r.QPS1, r.QPSCPU, r.QPSN)
		if f.recalls != "" {
			target := "-"
			if r.Target > 0 {
				target = strconv.FormatFloat(r.Target, 'g', -1, 64)
			}
			line = target + "\t" + line
		}
		if f.join {
			line += fmt.Sprintf("%.0f\t%.0f\t%.0f\t", r.QPSJoin, r.QPSKeysCPU, r.QPSJoinCPU)
		}
		line += fmt.Sprintf("%.0f\t%.0f\t", r.Candidates, r.LeafDistances)
		if cold {
			line += fmt.Sprintf("%.0f\t%.1f\t", r.ColdBytes, r.ColdRequests)
		}
		if vecFile {
			line += fmt.Sprintf("%.0f\t%.1f\t", r.ColdVecFileBytes, r.ColdVecFileRequests)
		}
		if srcRows {
			line += fmt.Sprintf("%.0f\t", r.ColdSourceVectorRows)
		}
		if srcRows || warmSrc {
			line += fmt.Sprintf("%.1f\t", r.SourceVectorRows)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}
