package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/parqdb/parqdb/filter"
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
machine.

The exact answer is computed by brute force over the source vectors unless
--ground-truth gives it as an .ivecs file of source row numbers (0-based, in
source file and row order, k or more per query). Timed searches skip the join
(the result keys only, as FAISS returns ids); --join adds, per setting, a joined warm-up
pass, a pass returning the key columns and a joined pass (with --columns), timed by
the process's CPU clock (qps_keys_cpu, qps_join_cpu; qps_join is the joined
pass by wall time) to show the join's cost. Every setting runs
a warm-up pass first: QPS is for a warm index. --plot draws recall against
QPS as a PNG.

--recall 0.95,0.99 adds one row per target recall, with the nprobe and
refine that the index's calibration picks for it (see search --recall); the
recall_target column marks those rows. Without --nprobe and --refine only
these rows are measured.`,
		Example: `  parqdb bench words --queries examples/glove/queries-100.fvecs -k 10 --nprobe 1,2,4,8,16,32 --refine 0,4 --plot recall-qps.png`,
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
	fl.IntVar(&f.coldQueries, "cold-queries", 100, "queries run on an uncached index to measure bytes and requests per query")
	fl.Int64Var(&f.snapshot, "snapshot", 0, "benchmark this retained snapshot")
	fl.StringVar(&f.format, "format", "table", "output format: table or json (one line per setting)")
	fl.BoolVar(&f.join, "join", false, "also time a keys-only and a joined pass per setting (qps_join; qps_keys_cpu and qps_join_cpu per process CPU-second)")
	fl.StringSliceVar(&f.columns, "columns", nil, "source columns joined by --join (default all)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress output")
	intRange(fl, "k", query.MinK, query.MaxK, "")
	intRange(fl, "threads", 1, maxWorkers, "")
	intRange(fl, "max-queries", 1, math.MaxInt32, "all queries")
	intRange(fl, "cold-queries", 1, math.MaxInt32, "")
	intRange(fl, "snapshot", 1, math.MaxInt64, "the current snapshot")
	fl.StringVar(&f.where, "where", "", whereHelp+"; recall is measured against brute force over the matching rows")
	addCacheSizeFlag(fl, &f.cacheSize)
	return cmd
}

// benchRow is the result of one setting.
type benchRow struct {
	// Target is the --recall target whose calibrated setting this row
	// measures (absent for the rows of the nprobe × refine sweep).
	Target        float64 `json:"recall_target,omitempty"`
	NProbe        int     `json:"nprobe"`
	Refine        int     `json:"refine"`
	Recall        float64 `json:"recall"`
	QPS1          float64 `json:"qps_1t"`
	QPSCPU        float64 `json:"qps_1t_cpu,omitempty"` // queries per CPU-second of the one-thread pass
	QPSN          float64 `json:"qps_nt"`
	Threads       int     `json:"threads"`
	QPSJoin       float64 `json:"qps_join,omitempty"`
	QPSKeysCPU    float64 `json:"qps_keys_cpu,omitempty"` // queries per process CPU-second of a pass returning the key columns
	QPSJoinCPU    float64 `json:"qps_join_cpu,omitempty"` // queries per process CPU-second of the joined pass
	Candidates    float64 `json:"candidates_per_query"`
	LeafDistances float64 `json:"leaf_distances_per_query"`
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
	cold, err := query.Open(ctx, env, name, query.OpenOptions{SnapshotID: f.snapshot, CacheBytes: -1, VectorCacheBytes: -1, RowCacheRows: -1})
	if err != nil {
		return err
	}
	defer cold.Close()

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
	for _, rf := range refines {
		opts := query.Options{K: f.k, Refine: rf, NoRows: true, Filter: where}
		if err := ix.Warm(ctx, opts); err != nil {
			return err
		}
		for _, np := range nprobes {
			opts.NProbe = np
			// One stage per setting, counting searches: the cold queries,
			// then the warm-up, one-thread, all-thread, and the joined
			// warm-up, keys-only and joined passes.
			stage := fmt.Sprintf("nprobe %d refine %d", np, rf)
			passes := 3
			if f.join {
				passes += 3
			}
			start := time.Now()
			p.Start(stage, int64(min(f.coldQueries, len(qs))+passes*len(qs)))
			r, err := benchSetting(ctx, ix, cold, qs, truth, opts, f, p)
			if err != nil {
				return err
			}
			p.End(stage, time.Since(start))
			rows = append(rows, r)
			if f.format == "json" {
				b, _ := json.Marshal(r)
				fmt.Fprintln(cmd.OutOrStdout(), string(b))
			}
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
		if err := ix.Warm(ctx, opts); err != nil {
			return err
		}
		stage := fmt.Sprintf("recall %v", target)
		start := time.Now()
		p.Start(stage, int64(min(f.coldQueries, len(qs))+3*len(qs)))
		r, err := benchSetting(ctx, ix, cold, qs, truth, opts, f, p)
		if err != nil {
			return err
		}
		p.End(stage, time.Since(start))
		r.Target = target
		rows = append(rows, r)
		if f.format == "json" {
			b, _ := json.Marshal(r)
			fmt.Fprintln(cmd.OutOrStdout(), string(b))
		}
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
	if f.plot != "" && sweep > 0 {
		title := fmt.Sprintf("%s: recall@%d vs QPS (%d queries, nlist %d, %s)", name, f.k, len(qs), ix.NList(), snap.Parameters["posting_encoding"])
		if err := plotBench(f.plot, title, f.k, rows[:sweep]); err != nil {
			return err
		}
	}
	return nil
}

// benchTruth returns the encoded keys of each query's exact k nearest rows.
func benchTruth(ctx context.Context, ix *query.Index, qs [][]float32, f benchFlags, where *filter.Predicate) ([][]string, error) {
	out := make([][]string, len(qs))
	if f.groundTruth != "" {
		ids, err := readIvecs(f.groundTruth)
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

// benchSetting measures one setting; p counts the searches done.
func benchSetting(ctx context.Context, ix, cold *query.Index, qs [][]float32, truth [][]string, opts query.Options, f benchFlags, p progressReporter) (benchRow, error) {
	r := benchRow{NProbe: opts.NProbe, Refine: opts.Refine, Threads: f.threads}
	// Cold: bytes and requests per query with no cache.
	nc := min(f.coldQueries, len(qs))
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
	// Warm-up, then one thread.
	if _, err := ix.SearchBatch(ctx, qs, opts, f.threads); err != nil {
		return r, err
	}
	p.Add(int64(len(qs)))
	results := make([]*query.Result, len(qs))
	start := time.Now()
	cpu, err := threadCPU(func() error {
		for i, q := range qs {
			res, err := ix.Search(ctx, q, opts)
			if err != nil {
				return fmt.Errorf("query %d: %w", i, err)
			}
			results[i] = res
			if i%256 == 255 { // the timed loop: no lock or clock read per query
				p.Add(256)
			}
		}
		p.Add(int64(len(qs) % 256))
		return nil
	})
	if err != nil {
		return r, err
	}
	r.QPS1 = float64(len(qs)) / time.Since(start).Seconds()
	if cpu > 0 {
		r.QPSCPU = float64(len(qs)) / cpu.Seconds()
	}
	// All threads.
	start = time.Now()
	if _, err := ix.SearchBatch(ctx, qs, opts, f.threads); err != nil {
		return r, err
	}
	r.QPSN = float64(len(qs)) / time.Since(start).Seconds()
	p.Add(int64(len(qs)))
	if f.join {
		jopts := opts
		jopts.NoRows, jopts.Columns = false, f.columns
		// Process CPU time, keys-only pass first: the join may decode
		// on other goroutines (source reads), which a thread clock misses.
		pass := func(o query.Options) (time.Duration, error) {
			return processCPU(func() error {
				for i, q := range qs {
					if _, err := ix.Search(ctx, q, o); err != nil {
						return fmt.Errorf("query %d: %w", i, err)
					}
					p.Add(1)
				}
				return nil
			})
		}
		if _, err := pass(jopts); err != nil { // warm-up, as for the other passes
			return r, err
		}
		kopts := opts
		kopts.NoRows, kopts.Columns = false, ix.Snapshot().SourceKeyFields
		kcpu, err := pass(kopts)
		if err != nil {
			return r, err
		}
		start = time.Now()
		jcpu, err := pass(jopts)
		if err != nil {
			return r, err
		}
		r.QPSJoin = float64(len(qs)) / time.Since(start).Seconds()
		if kcpu > 0 && jcpu > 0 {
			r.QPSKeysCPU = float64(len(qs)) / kcpu.Seconds()
			r.QPSJoinCPU = float64(len(qs)) / jcpu.Seconds()
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
	hdr += "candidates/q\trouting_dist/q\tcold_bytes/q\tcold_requests/q\t"
	// The exact vectors' reads, only when some setting made them.
	var vecFile, srcRows bool
	for _, r := range rows {
		vecFile = vecFile || r.ColdVecFileRequests > 0
		srcRows = srcRows || r.ColdSourceVectorRows > 0 || r.SourceVectorRows > 0
	}
	if vecFile {
		hdr += "cold_vecfile_bytes/q\tcold_vecfile_requests/q\t"
	}
	if srcRows {
		hdr += "cold_src_vec_rows/q\tsrc_vec_rows/q\t"
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
		line += fmt.Sprintf("%.0f\t%.0f\t%.0f\t%.1f\t", r.Candidates, r.LeafDistances, r.ColdBytes, r.ColdRequests)
		if vecFile {
			line += fmt.Sprintf("%.0f\t%.1f\t", r.ColdVecFileBytes, r.ColdVecFileRequests)
		}
		if srcRows {
			line += fmt.Sprintf("%.0f\t%.1f\t", r.ColdSourceVectorRows, r.SourceVectorRows)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}

// plotBench draws recall@k (x) against QPS (y, log scale): per refine
// factor, one thread by wall clock and per CPU-second, and all threads.
func plotBench(path, title string, k int, rows []benchRow) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = fmt.Sprintf("recall@%d", k)
	p.Y.Label.Text = "queries per second (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Top = false
	p.Legend.Left = true
	palette := []color.RGBA{{0x1f, 0x77, 0xb4, 255}, {0xd6, 0x27, 0x28, 255}, {0x2c, 0xa0, 0x2c, 255}, {0x94, 0x67, 0xbd, 255}, {0xff, 0x7f, 0x0e, 255}}
	var refines []int
	for _, r := range rows {
		if len(refines) == 0 || refines[len(refines)-1] != r.Refine {
			refines = append(refines, r.Refine)
		}
	}
	for i, rf := range refines {
		for _, mode := range []string{"wall", "cpu", "threads"} {
			var pts plotter.XYs
			threads := 0
			for _, r := range rows {
				if r.Refine != rf {
					continue
				}
				y := r.QPS1
				switch mode {
				case "cpu":
					y = r.QPSCPU
				case "threads":
					y, threads = r.QPSN, r.Threads
				}
				if y > 0 {
					pts = append(pts, plotter.XY{X: r.Recall, Y: y})
				}
			}
			if len(pts) == 0 || (mode == "threads" && threads <= 1) {
				continue
			}
			line, points, err := plotter.NewLinePoints(pts)
			if err != nil {
				return err
			}
			c := palette[i%len(palette)]
			line.Color, points.Color = c, c
			line.Width = vg.Points(1.5)
			points.Shape = draw.CircleGlyph{}
			label := fmt.Sprintf("refine %d", rf)
			if rf == 0 {
				label = "no refine"
			}
			switch mode {
			case "wall":
				label += ", 1 thread (wall clock)"
			case "cpu":
				label += ", 1 thread (per CPU-second)"
				line.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
				points.Shape = draw.BoxGlyph{}
			case "threads":
				label += fmt.Sprintf(", %d threads (wall clock)", threads)
				line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
				points.Shape = draw.TriangleGlyph{}
			}
			p.Add(line, points)
			p.Legend.Add(label, line, points)
		}
	}
	if err := p.Save(8*vg.Inch, 5*vg.Inch, path); err != nil {
		return fmt.Errorf("--plot %s: %w", path, err)
	}
	return nil
}

// readIvecs reads the .ivecs format: per row an int32 count then that many
// int32 values, little-endian.
func readIvecs(path string) ([][]int32, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out [][]int32
	for off := 0; off < len(data); {
		if len(data)-off < 4 {
			return nil, fmt.Errorf("%s: truncated at byte %d", path, off)
		}
		n := int(int32(binary.LittleEndian.Uint32(data[off:])))
		off += 4
		if n < 0 || len(data)-off < 4*n {
			return nil, fmt.Errorf("%s: row %d: bad count %d or truncated", path, len(out), n)
		}
		row := make([]int32, n)
		for i := range row {
			row[i] = int32(binary.LittleEndian.Uint32(data[off+4*i:]))
		}
		off += 4 * n
		out = append(out, row)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	return out, nil
}

// logTicks labels a log axis at 1, 2 and 5 times each power of ten.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for p := math.Pow(10, math.Floor(math.Log10(lo))); p <= hi; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := p * m; v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
			}
		}
	}
	return ticks
}
