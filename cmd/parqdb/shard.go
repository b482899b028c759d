package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/parqdb/parqdb/buildplan"
	"github.com/parqdb/parqdb/indexer"
)

func init() {
	indexSubcommands = append(indexSubcommands, newIndexBuildShardCmd, newIndexCommitCmd)
}

// shardsFlagUsage is the help of index create/refresh --shards.
const shardsFlagUsage = "write a plan for this many shard tasks instead of building (then index build-shard, index commit; docs/build.md \"Sharded builds\")"

// printPlanSummary prints what a plan holds and the next commands.
func printPlanSummary(w io.Writer, pr *indexer.PlanResult) {
	p := pr.Plan
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "plan\t%s\n", pr.Location)
	fmt.Fprintf(tw, "index\t%s (%s, snapshot %d)\n", p.IndexName, p.Operation, p.SnapshotID)
	fmt.Fprintf(tw, "rows\t%d\n", p.Rows)
	fmt.Fprintf(tw, "nlist\t%d\n", p.NList)
	if p.ReusedCentroids {
		fmt.Fprintf(tw, "centroids\treused %s\n", p.CentroidsMetadata)
	} else {
		fmt.Fprintf(tw, "centroids\ttrained on %d sample rows, %s\n", p.SampleRows, p.CentroidsMetadata)
	}
	for i, s := range p.Shards {
		fmt.Fprintf(tw, "shard %d\t%d file(s), %d rows\n", i, len(s.Files), s.Rows)
	}
	var total time.Duration
	for _, s := range pr.Stages {
		total += s.Duration
	}
	fmt.Fprintf(tw, "time\t%s\n", total.Round(time.Millisecond))
	for _, w := range pr.Warnings {
		fmt.Fprintf(tw, "warning\t%s\n", w)
	}
	tw.Flush()
	fmt.Fprintf(w, "next: parqdb index build-shard %s --shard I   (for I = 0 … %d, anywhere, in any order)\n", pr.Location, len(p.Shards)-1)
	fmt.Fprintf(w, "then: parqdb index commit %s\n", pr.Location)
}

func newIndexBuildShardCmd(g *globals) *cobra.Command {
	var so indexer.ShardOptions
	var shard int
	var quiet bool
	cmd := &cobra.Command{
		Use:   "build-shard PLAN --shard I",
		Short: "Build one shard of a sharded build plan (uncommitted postings pieces)",
		Long: `build-shard reads the source files that the plan (written by index create
--shards or index refresh --shards) assigns to shard I, assigns and encodes
their rows with the plan's centroids and writes the postings pieces and the
shard manifest under the plan's build prefix. It commits nothing; index commit
does, once every shard has finished. A rerun replaces the shard's earlier
output, so a failed or killed shard is simply run again. A source file that
changed since the plan was made fails the shard: make a new plan.

PLAN is the location index create --shards printed
(indexes/<index uuid32>/<snapshot-id>-<write-id>/plan.json). In a Kubernetes
Indexed Job, pass --shard $(JOB_COMPLETION_INDEX) (deploy/kubernetes/).`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("shard") {
				return usagef("--shard is required (0 … shards−1)")
			}
			return runLongEnv(cmd, g, quiet, func(ctx context.Context, e *env, p progressReporter) error {
				limitBuildMemory()
				so.Progress = p
				res, err := indexer.BuildShard(ctx, indexer.Env{Warehouse: e.wh, Catalog: e.cat}, args[0], shard, so)
				if err != nil {
					return err
				}
				p.Close()
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
				fmt.Fprintf(tw, "shard\t%d\n", res.Shard)
				fmt.Fprintf(tw, "rows\t%d\n", res.Rows)
				fmt.Fprintf(tw, "written\t%s in %d files\n", formatBytes(res.Bytes), res.Files)
				fmt.Fprintf(tw, "manifest\t%s\n", res.Manifest)
				return tw.Flush()
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&shard, "shard", 0, "the shard to build, 0 … shards−1 (required)")
	f.IntVar(&so.Workers, "workers", 0, "goroutines to use (default all cores); never changes the result")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress output")
	intRange(f, "shard", 0, buildplan.MaxShards-1, "")
	intRange(f, "workers", 1, maxWorkers, "all cores")
	return cmd
}

func newIndexCommitCmd(g *globals) *cobra.Command {
	var quiet bool
	cmd := &cobra.Command{
		Use:   "commit PLAN",
		Short: "Publish the index that a sharded build plan's shards built (one catalog commit)",
		Long: `commit checks that every shard of the plan has finished, that the source and
the catalog are still as the plan found them, merges the shards' postings
manifests into one manifest of the root-bucketed layout and commits the
snapshot once by catalog compare-and-swap. It refuses a plan with missing
shards (naming them) or a stale one (the source changed, or the index moved
to another snapshot): nothing is then committed.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLongEnv(cmd, g, quiet, func(ctx context.Context, e *env, p progressReporter) error {
				res, err := indexer.CommitPlan(ctx, indexer.Env{Warehouse: e.wh, Catalog: e.cat}, args[0], indexer.CommitOptions{Progress: p})
				if err != nil {
					return err
				}
				p.Close()
				printBuildSummary(cmd.OutOrStdout(), res)
				return nil
			})
		},
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress output")
	return cmd
}
