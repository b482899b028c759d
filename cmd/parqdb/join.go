package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/parqdb/parqdb/buildplan"
	"github.com/parqdb/parqdb/knnjoin"
	"github.com/parqdb/parqdb/query"
)

func init() {
	subcommands = append(subcommands, newJoinCmd, newJoinShardCmd, newJoinCommitCmd)
}

type joinFlags struct {
	o                       knnjoin.Options
	maxDistance, minSimilar float64
	shards, workers, batch  int
	cacheSize               string
	quiet                   bool
}

func newJoinCmd(g *globals) *cobra.Command {
	var f joinFlags
	cmd := &cobra.Command{
		Use:   "join INDEX --queries-table SOURCE --query-key COLS --query-vector FIELD --output DEST",
		Short: "For every row of a query table, write its k nearest rows in an index as Parquet (a kNN join)",
		Long: `join searches the index once for every row of the query table SOURCE (a
Parquet file or folder, local or s3://, or an iceberg:// table, as index create
reads a source) and writes DEST, a Parquet folder (local or s3://) with one row
per query and rank: query_<key> for each --query-key column, the neighbour's
key columns under the index's names, _distance and _rank (1 = nearest). The
searches run in batches, list-major, on every core (--workers), with the
options of search (-k, --nprobe, --refine, --recall, --where on the index
rows); the results equal parqdb search --queries with the same options.

--self drops each query's own row (the neighbour with the query's key): the
search asks for k+1 and keeps k. --max-distance (any metric) or
--min-similarity (cosine: 1 − _distance) drops farther neighbours, so a
query may get fewer than k rows, or none.

Nothing is visible in DEST until the join has finished: parts are written
under DEST/_parqdb_join/ and published at the end, then DEST/_SUCCESS is
written last; Ctrl-C, a failure or a kill leaves no visible output, and a
rerun starts again. DEST must be new or empty.

--shards N writes a plan instead of joining: run parqdb join-shard PLAN
--shard I for I = 0 … N−1 (anywhere, in any order, retried freely), then
parqdb join-commit PLAN. See docs/join.md.`,
		Example: `  parqdb join words --queries-table examples/glove/glove-10k.parquet --query-key word --query-vector embedding -k 10 --self --output knn/
  parqdb join words --queries-table examples/glove/glove-10k.parquet --query-key word --query-vector embedding -k 5 --self --min-similarity 0.9 --output dups/
  parqdb join words --queries-table examples/glove/glove-10k.parquet --query-key word --query-vector embedding -k 10 --output knn-sharded/ --shards 2
  parqdb join-shard knn-sharded/_parqdb_join/plan.json --shard 0
  parqdb join-shard knn-sharded/ --shard 1
  parqdb join-commit knn-sharded/`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runJoin(cmd, g, args[0], &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.o.Queries, "queries-table", "", "the query table: a Parquet file or folder (local or s3://) or an iceberg:// table (required)")
	fl.StringSliceVar(&f.o.QueryKey, "query-key", nil, "the query table's key column(s), written as query_<name> (required)")
	fl.StringVar(&f.o.QueryVector, "query-vector", "", "the query table's vector column (required)")
	fl.StringVarP(&f.o.Output, "output", "o", "", "the output Parquet folder, new or empty: local or s3://bucket/prefix (required)")
	fl.IntVarP(&f.o.K, "k", "k", query.DefaultK, fmt.Sprintf("neighbours per query, %d to %d", query.MinK, query.MaxK))
	fl.IntVar(&f.o.NProbe, "nprobe", 0, fmt.Sprintf("lists to scan, %d to %d (default %d)", query.MinNProbe, query.MaxNProbe, query.DefaultNProbe))
	fl.IntVar(&f.o.Refine, "refine", 0, fmt.Sprintf("re-score the best refine·k candidates with exact vectors, %d to %d", query.MinRefine, query.MaxRefine))
	fl.Float64Var(&f.o.Recall, "recall", 0, "target recall@k in (0, 1]: nprobe and refine come from the index's calibration")
	fl.StringVar(&f.o.Where, "where", "", whereHelp+"; filters the neighbours, not the queries")
	fl.BoolVar(&f.o.Self, "self", false, "drop each query's own row (the neighbour whose key equals the query key)")
	fl.Float64Var(&f.maxDistance, "max-distance", 0, "drop neighbours whose _distance is larger")
	fl.Float64Var(&f.minSimilar, "min-similarity", 0, "cosine indexes: drop neighbours whose similarity 1 − _distance is smaller")
	fl.Int64Var(&f.o.SnapshotID, "snapshot", 0, "join with this retained snapshot instead of the current one")
	fl.IntVar(&f.shards, "shards", 0, "write a plan for this many join-shard tasks instead of joining (docs/join.md)")
	fl.IntVar(&f.workers, "workers", 0, "goroutines searching (default all cores); never changes the result")
	fl.IntVar(&f.batch, "batch-queries", 0, "queries per search batch (default: sized from the memory budget); never changes the result")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress output")
	intRange(fl, "k", query.MinK, query.MaxK, "")
	intRange(fl, "nprobe", query.MinNProbe, query.MaxNProbe, fmt.Sprintf("%d, or what --recall picks", query.DefaultNProbe))
	intRange(fl, "refine", query.MinRefine, query.MaxRefine, "")
	floatRange(fl, "recall", 0, 1, "")
	floatRange(fl, "min-similarity", -1, 1, "")
	floatRange(fl, "max-distance", 0, math.MaxFloat64, "")
	intRange(fl, "snapshot", 1, math.MaxInt64, "the current snapshot")
	intRange(fl, "shards", 1, buildplan.MaxShards, "the whole join in this process")
	intRange(fl, "workers", 1, maxWorkers, "all cores")
	intRange(fl, "batch-queries", 1, 1<<20, "sized from the memory budget")
	fl.StringVar(&f.cacheSize, "cache-size", "", joinMemoryHelp)
	return cmd
}

func runJoin(cmd *cobra.Command, g *globals, index string, f *joinFlags) error {
	f.o.Index = index
	for _, name := range []string{"queries-table", "query-key", "query-vector", "output"} {
		if !cmd.Flags().Changed(name) {
			return usagef("--%s is required", name)
		}
	}
	if err := checkRecallFlags(cmd, f.o.Recall); err != nil {
		return err
	}
	if cmd.Flags().Changed("max-distance") && cmd.Flags().Changed("min-similarity") {
		return usagef("give --max-distance or --min-similarity, not both")
	}
	if cmd.Flags().Changed("max-distance") {
		f.o.MaxDistance = &f.maxDistance
	}
	if cmd.Flags().Changed("min-similarity") {
		f.o.MinSimilarity = &f.minSimilar
	}
	if _, err := parseWhere(f.o.Where); err != nil {
		return err
	}
	if err := applyJoinMemory(f.cacheSize); err != nil {
		return err
	}
	return runLongEnv(cmd, g, f.quiet, func(ctx context.Context, e *env, p progressReporter) error {
		qenv := query.Env{Warehouse: e.wh, Catalog: e.cat}
		if cmd.Flags().Changed("shards") {
			pr, err := knnjoin.MakePlan(ctx, qenv, f.o, f.shards)
			if err != nil {
				return err
			}
			p.Close()
			printJoinPlan(cmd.OutOrStdout(), pr)
			return nil
		}
		start := time.Now()
		cr, sr, err := knnjoin.Join(ctx, qenv, f.o, knnjoin.RunOptions{Workers: f.workers, BatchQueries: f.batch, Progress: p})
		if err != nil {
			return err
		}
		p.Close()
		printJoinResult(cmd.OutOrStdout(), cr, sr, time.Since(start))
		return nil
	})
}

// printJoinPlan prints what a plan holds and the next commands.
func printJoinPlan(w io.Writer, pr *knnjoin.PlanResult) {
	p := pr.Plan
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "plan\t%s\n", pr.Location)
	fmt.Fprintf(tw, "index\t%s (snapshot %d)\n", p.Index, p.SnapshotID)
	fmt.Fprintf(tw, "queries\t%s\n", p.Queries)
	for i, s := range p.Shards {
		fmt.Fprintf(tw, "shard %d\t%d file(s), %d queries\n", i, len(s.Files), s.Rows)
	}
	tw.Flush()
	fmt.Fprintf(w, "next: parqdb join-shard %s --shard I   (for I = 0 … %d, anywhere, in any order)\n", pr.Location, len(p.Shards)-1)
	fmt.Fprintf(w, "then: parqdb join-commit %s\n", pr.Location)
}

// printJoinResult prints a committed join's summary; sr (the in-process
// shard, nil after join-commit) adds the query rate.
func printJoinResult(w io.Writer, cr *knnjoin.CommitResult, sr *knnjoin.ShardResult, total time.Duration) {
	s := cr.Success
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "output\t%s\n", cr.Output)
	fmt.Fprintf(tw, "queries\t%d\n", s.QueryRows)
	fmt.Fprintf(tw, "rows\t%d in %d file(s), %s\n", s.Rows, len(s.Parts), formatBytes(cr.Bytes))
	if sr != nil && sr.Duration > 0 {
		fmt.Fprintf(tw, "rate\t%.0f queries/s\n", float64(sr.Queries)/sr.Duration.Seconds())
	}
	if total > 0 {
		fmt.Fprintf(tw, "time\t%s\n", total.Round(time.Millisecond))
	}
	tw.Flush()
}

func newJoinShardCmd(g *globals) *cobra.Command {
	var shard, workers, batch int
	var quiet bool
	var cacheSize string
	cmd := &cobra.Command{
		Use:   "join-shard PLAN --shard I",
		Short: "Run one shard of a sharded join plan (join --shards)",
		Long: `join-shard reads the query files that the plan (written by join --shards)
assigns to shard I, searches them and writes the shard's parts and manifest
under DEST/_parqdb_join/. Nothing becomes visible in DEST: join-commit
publishes, once every shard has finished. A rerun replaces the shard's
earlier run, so a failed or killed shard is simply run again. PLAN is the
location join --shards printed (DEST/_parqdb_join/plan.json; DEST itself is
accepted). In a Kubernetes Indexed Job, pass --shard $(JOB_COMPLETION_INDEX)
(deploy/kubernetes/join-shards-job.yaml).`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("shard") {
				return usagef("--shard is required (0 … shards−1)")
			}
			if err := applyJoinMemory(cacheSize); err != nil {
				return err
			}
			return runLongEnv(cmd, g, quiet, func(ctx context.Context, e *env, p progressReporter) error {
				res, err := knnjoin.RunShard(ctx, query.Env{Warehouse: e.wh, Catalog: e.cat}, args[0], shard, knnjoin.RunOptions{Workers: workers, BatchQueries: batch, Progress: p})
				if err != nil {
					return err
				}
				p.Close()
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
				fmt.Fprintf(tw, "shard\t%d\n", res.Shard)
				fmt.Fprintf(tw, "queries\t%d\n", res.Queries)
				fmt.Fprintf(tw, "rows\t%d in %d file(s), %s\n", res.Rows, res.Parts, formatBytes(res.Bytes))
				if res.Queries > 0 {
					fmt.Fprintf(tw, "rate\t%.0f queries/s\n", float64(res.Queries)/res.Duration.Seconds())
				}
				fmt.Fprintf(tw, "manifest\t%s\n", res.Manifest)
				return tw.Flush()
			})
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&shard, "shard", 0, "the shard to run, 0 … shards−1 (required)")
	fl.IntVar(&workers, "workers", 0, "goroutines searching (default all cores); never changes the result")
	fl.IntVar(&batch, "batch-queries", 0, "queries per search batch (default: sized from the memory budget); never changes the result")
	fl.BoolVarP(&quiet, "quiet", "q", false, "no progress output")
	intRange(fl, "shard", 0, buildplan.MaxShards-1, "")
	intRange(fl, "workers", 1, maxWorkers, "all cores")
	intRange(fl, "batch-queries", 1, 1<<20, "sized from the memory budget")
	fl.StringVar(&cacheSize, "cache-size", "", joinMemoryHelp)
	return cmd
}

func newJoinCommitCmd(g *globals) *cobra.Command {
	var quiet bool
	cmd := &cobra.Command{
		Use:   "join-commit PLAN",
		Short: "Publish the output of a sharded join once every shard has finished",
		Long: `join-commit checks that every shard of the plan has finished (naming the
missing ones otherwise: nothing is then published), publishes their parts as
DEST/part-SSSSSS-NNNNN.parquet, writes DEST/_SUCCESS last and removes
DEST/_parqdb_join/. A stopped commit is run again; rerunning a finished one
reports it.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLong(cmd, quiet, func(ctx context.Context, p progressReporter) error {
				cr, err := knnjoin.Commit(ctx, args[0], p)
				if err != nil {
					return err
				}
				p.Close()
				printJoinResult(cmd.OutOrStdout(), cr, nil, 0)
				return nil
			})
		},
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress output")
	return cmd
}
