package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/parqdb/parqdb/buildplan"
	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/lifecycle"
	"github.com/parqdb/parqdb/metadata"
)

func init() {
	indexSubcommands = append(indexSubcommands, newIndexRefreshCmd, newIndexOptimizeCmd, newIndexHistoryCmd, newIndexExpireCmd, newIndexDropCmd)
	subcommands = append(subcommands, newGCCmd)
}

// maxGrowth bounds refresh --max-growth (a fraction: 1000 is 100000 %).
const maxGrowth = 1000

// maxDuration bounds duration flags: ten years.
const maxDuration = 10 * 365 * 24 * time.Hour

func newIndexRefreshCmd(g *globals) *cobra.Command {
	var ro indexer.RefreshOptions
	var quiet, calib bool
	cmd := &cobra.Command{
		Use:   "refresh NAME [--retrain] [--dry-run]",
		Short: "Bring an index up to date with its source as a successor snapshot",
		Long: `refresh compares the source with the state the current snapshot indexed:
- unchanged: nothing is committed, and it says so;
- only new files, adding at most --max-growth (default 20%) of the indexed rows:
  incremental — only the new files are read, assigned to the existing centroids
  and written as new postings files; the old files are kept;
- files removed or rewritten, growth above the threshold, or --retrain: a full
  rebuild with newly trained centroids.
The successor is committed by catalog compare-and-swap; a concurrent refresh
that committed first makes this one fail with a clear error (run it again).`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if calib && ro.Shards > 0 {
				return usagef("--calibrate needs the refresh to commit in this process; with --shards, calibrate once the shards are committed: parqdb index refresh %s --calibrate", args[0])
			}
			return runLongEnv(cmd, g, quiet, func(ctx context.Context, e *env, p progressReporter) error {
				limitBuildMemory()
				ro.Progress = p
				res, err := indexer.Refresh(ctx, indexer.Env{Warehouse: e.wh, Catalog: e.cat}, args[0], ro)
				if err != nil {
					return err
				}
				p.Close()
				out := cmd.OutOrStdout()
				verb := refreshVerb(res.Action, ro.DryRun)
				fmt.Fprintf(out, "%s: %s\n", verb, res.Reason)
				if n := len(res.AddedFiles) + len(res.RemovedFiles) + len(res.RewrittenFiles); n > 0 {
					fmt.Fprintf(out, "source: %d file(s) added (%d rows), %d removed, %d rewritten\n",
						len(res.AddedFiles), res.AddedRows, len(res.RemovedFiles), len(res.RewrittenFiles))
				}
				if res.Build != nil {
					printBuildSummary(out, res.Build)
				}
				if res.Plan != nil {
					printPlanSummary(out, res.Plan)
				}
				if calib && !ro.DryRun && res.Plan == nil {
					return calibrateIndex(ctx, out, e, args[0])
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&ro.Retrain, "retrain", false, "always rebuild with newly trained centroids")
	f.BoolVar(&ro.DryRun, "dry-run", false, "say what refresh would do and commit nothing")
	f.BoolVar(&calib, "calibrate", false, calibrateFlagUsage)
	f.Float64Var(&ro.MaxGrowth, "max-growth", indexer.DefaultMaxGrowth, "drift threshold: retrain when appended rows exceed this fraction of the indexed rows")
	f.IntVar(&ro.Workers, "workers", 0, "goroutines to use (default all cores)")
	f.IntVar(&ro.Shards, "shards", 0, shardsFlagUsage)
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress output")
	intRange(f, "shards", 1, buildplan.MaxShards, "a build in this process")
	floatRange(f, "max-growth", 0, maxGrowth, "")
	intRange(f, "workers", 1, maxWorkers, "all cores")
	return cmd
}

func newIndexOptimizeCmd(g *globals) *cobra.Command {
	var oo indexer.OptimizeOptions
	var quiet bool
	cmd := &cobra.Command{
		Use:   "optimize NAME",
		Short: "Rewrite postings split over many files by refreshes into the compact layout",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLongEnv(cmd, g, quiet, func(ctx context.Context, e *env, p progressReporter) error {
				limitBuildMemory()
				oo.Progress = p
				res, err := indexer.Optimize(ctx, indexer.Env{Warehouse: e.wh, Catalog: e.cat}, args[0], oo)
				if err != nil {
					return err
				}
				p.Close()
				out := cmd.OutOrStdout()
				if !res.Done {
					fmt.Fprintf(out, "nothing to do: the postings are already compact (%d files, %d row groups)\n", res.FilesBefore, res.RowGroupsBefore)
					return nil
				}
				fmt.Fprintf(out, "rewrote %d files (%d row groups) into %d files\n", res.FilesBefore, res.RowGroupsBefore, res.Build.Files-1)
				printBuildSummary(out, res.Build)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&oo.Force, "force", false, "rewrite even a compact layout")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress output")
	return cmd
}

// historyRow is one snapshot in `index history --format json`.
type historyRow struct {
	SnapshotID     int64             `json:"snapshot-id"`
	SequenceNumber int64             `json:"sequence-number"`
	TimestampMs    int64             `json:"timestamp-ms"`
	Rows           int64             `json:"rows"`
	Current        bool              `json:"current"`
	Summary        map[string]string `json:"summary"`
}

func newIndexHistoryCmd(g *globals) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "history NAME",
		Short: "List an index's snapshots and its snapshot log",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usagef("--format must be text or json, not %q", format)
			}
			ctx := cmd.Context()
			return withEnv(ctx, g, func(e *env) error {
				m, entry, err := catalog.LoadMetadata(ctx, e.cat, e.wh, args[0])
				if err != nil {
					return err
				}
				return printHistory(cmd.OutOrStdout(), format, m, entry.MetadataLocation)
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
}

func printHistory(w io.Writer, format string, m *metadata.Metadata, loc string) error {
	snaps := slices.Clone(m.Snapshots)
	slices.SortFunc(snaps, func(a, b metadata.Snapshot) int { return int(a.SequenceNumber - b.SequenceNumber) })
	rows := make([]historyRow, len(snaps))
	for i, s := range snaps {
		rows[i] = historyRow{s.SnapshotID, s.SequenceNumber, s.TimestampMs, s.IndexedRows, s.SnapshotID == m.CurrentSnapshotID, s.Summary}
	}
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{
			"metadata-location": loc, "last-sequence-number": m.LastSequenceNumber,
			"current-snapshot-id": m.CurrentSnapshotID, "snapshots": rows, "snapshot-log": m.SnapshotLog,
		})
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SNAPSHOT\tSEQUENCE\tTIME\tROWS\tCURRENT\tSUMMARY")
	for _, r := range rows {
		cur := ""
		if r.Current {
			cur = "*"
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(r.Summary)) {
			parts = append(parts, k+"="+r.Summary[k])
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%d\t%s\t%s\n", r.SnapshotID, r.SequenceNumber,
			time.UnixMilli(r.TimestampMs).UTC().Format(time.RFC3339), r.Rows, cur, strings.Join(parts, " "))
	}
	tw.Flush()
	fmt.Fprintln(w, "\nsnapshot log:")
	for _, l := range m.SnapshotLog {
		fmt.Fprintf(w, "  %s  snapshot %d\n", time.UnixMilli(l.TimestampMs).UTC().Format(time.RFC3339), l.SnapshotID)
	}
	return nil
}

func newIndexExpireCmd(g *globals) *cobra.Command {
	var o lifecycle.ExpireOptions
	cmd := &cobra.Command{
		Use:   "expire NAME (--retain-last N | --older-than DURATION)",
		Short: "Remove old snapshots and their log entries (files go later, with gc)",
		Long: `expire removes non-current snapshots — those beyond the N most recent
(--retain-last) or older than DURATION (--older-than, e.g. 72h) — and their
snapshot-log entries, committing new metadata. The current snapshot is always
kept, last-sequence-number is preserved and snapshot ids are never reused.
The files only the removed snapshots used are deleted by a later
'parqdb gc' once the grace period has passed.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.RetainLast == 0 && o.OlderThan == 0 {
				return usagef("give --retain-last N or --older-than DURATION")
			}
			if o.RetainLast < 0 || o.OlderThan < 0 {
				return usagef("--retain-last and --older-than must not be negative")
			}
			ctx := cmd.Context()
			return withEnv(ctx, g, func(e *env) error {
				res, err := lifecycle.Expire(ctx, lifecycle.Env{Warehouse: e.wh, Catalog: e.cat}, args[0], o)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				switch {
				case len(res.Removed) == 0:
					fmt.Fprintln(out, "nothing to expire")
				case o.DryRun:
					fmt.Fprintf(out, "would remove snapshots %v\n", res.Removed)
				default:
					fmt.Fprintf(out, "removed snapshots %v\nmetadata %s\n", res.Removed, res.MetadataLocation)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.RetainLast, "retain-last", 0, "keep the N most recent snapshots")
	f.DurationVar(&o.OlderThan, "older-than", 0, "remove snapshots older than this (e.g. 72h)")
	f.BoolVar(&o.DryRun, "dry-run", false, "list what would be removed and commit nothing")
	intRange(f, "retain-last", 1, math.MaxInt32, "no count limit (then give --older-than)")
	durationRange(f, "older-than", time.Second, maxDuration, "no age limit (then give --retain-last)")
	return cmd
}

func newIndexDropCmd(g *globals) *cobra.Command {
	var purge bool
	cmd := &cobra.Command{
		Use:   "drop NAME [--purge]",
		Short: "Remove an index from the catalog (and with --purge, its files)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return withEnv(ctx, g, func(e *env) error {
				res, err := lifecycle.Drop(ctx, lifecycle.Env{Warehouse: e.wh, Catalog: e.cat}, args[0], purge)
				if err != nil {
					return err
				}
				if purge {
					fmt.Fprintf(cmd.OutOrStdout(), "dropped %s; deleted %d files (%s)", args[0], res.Deleted, formatBytes(res.Bytes))
					if res.Kept > 0 {
						fmt.Fprintf(cmd.OutOrStdout(), "; kept %d that another catalog entry references", res.Kept)
					}
					fmt.Fprintln(cmd.OutOrStdout())
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "dropped %s; its files go with the next gc after the grace period\n", args[0])
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&purge, "purge", false, "also delete the index's metadata and postings files now")
	return cmd
}

// refreshVerb is how refresh names what it did (or, with --dry-run, what
// it would do) for action.
func refreshVerb(action string, dryRun bool) string {
	verb := map[string]string{indexer.ActionNone: "nothing to do", indexer.ActionIncremental: "incremental refresh", indexer.ActionRebuild: "full rebuild", indexer.ActionReassign: "reassign (centroids kept, postings rewritten)"}[action]
	if !dryRun || action == indexer.ActionNone {
		return verb
	}
	if action == indexer.ActionIncremental {
		return "would do an " + verb
	}
	return "would do a " + verb
}

func newGCCmd(g *globals) *cobra.Command {
	var o lifecycle.GCOptions
	cmd := &cobra.Command{
		Use:   "gc [--dry-run] [--grace DURATION]",
		Short: "Delete warehouse files that no retained snapshot of any index references",
		Long: `gc deletes the files under indexes/ and metadata/ of the warehouse that no
live metadata file references and that are older than the grace period
(default 24h). The live metadata files of an index are its current one, those
written within the grace period and the one that was current when the period
began: a reader that loaded any metadata file current within the period keeps
working (the retention boundary, docs/lifecycle.md). Files younger than the
grace period are never deleted, so a build in progress is safe. gc also removes
the unfinished writes that killed writers left (local temporary files named
.parqdb-tmp:…, S3 multipart uploads never completed) once they are older than
the grace period, and the spill folders of killed builds in the temporary
folder ($TMPDIR/parqdb-spill-build-*, parqdb-spill-keys-* that no running build holds);
--dry-run lists them.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.GraceSet = cmd.Flags().Changed("grace")
			ctx := cmd.Context()
			return withEnv(ctx, g, func(e *env) error {
				rep, err := lifecycle.GC(ctx, lifecycle.Env{Warehouse: e.wh, Catalog: e.cat}, o)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				spills, err := indexer.SpillLeftovers("", !o.DryRun)
				if err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %v\n", err)
				}
				for _, sp := range spills {
					switch {
					case o.DryRun:
						fmt.Fprintf(out, "spill folder of a killed build %s (%s)\n", sp.Path, formatBytes(sp.Bytes))
					case sp.Err != nil:
						fmt.Fprintf(cmd.ErrOrStderr(), "warning: spill folder of a killed build %s: %v\n", sp.Path, sp.Err)
					default:
						fmt.Fprintf(out, "removed spill folder of a killed build %s (%s)\n", sp.Path, formatBytes(sp.Bytes))
					}
				}
				for _, in := range rep.Orphans {
					if o.DryRun {
						fmt.Fprintf(out, "orphan %s (%s, %s)\n", in.Key, formatBytes(in.Size), in.ModTime.UTC().Format(time.RFC3339))
					} else {
						fmt.Fprintf(out, "deleted %s\n", in.Key)
					}
				}
				for _, lo := range rep.Leftovers {
					if o.DryRun {
						fmt.Fprintf(out, "unfinished write %s (%s, started %s)\n", lo.Name, formatBytes(lo.Size), lo.Started.UTC().Format(time.RFC3339))
					} else {
						fmt.Fprintf(out, "removed unfinished write %s\n", lo.Name)
					}
				}
				verb := "deleted"
				if o.DryRun {
					verb = "would delete"
				}
				fmt.Fprintf(out, "%s %d orphan file(s), %s, and %d unfinished write(s) of killed writers; %d in use by current snapshots; "+
					"kept within the grace period: %d file(s) of expired snapshots and older metadata, %d unreferenced file(s), %d unfinished write(s)\n",
					verb, len(rep.Orphans), formatBytes(rep.Bytes), len(rep.Leftovers), rep.Live-rep.Retained, rep.Retained, len(rep.Young), rep.YoungLeftovers)
				if rep.ActivePlans > 0 {
					fmt.Fprintf(out, "kept %d sharded build(s) in progress: plan, shard files and centroids (docs/build.md, \"Sharded builds\")\n", rep.ActivePlans)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.DryRun, "dry-run", false, "list the orphans and delete nothing")
	f.DurationVar(&o.Grace, "grace", lifecycle.DefaultGrace, "leave files younger than this alone")
	durationRange(f, "grace", 0, maxDuration, "")
	return cmd
}
