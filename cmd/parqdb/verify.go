package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/parqdb/parqdb/verify"
)

func init() { indexSubcommands = append(indexSubcommands, newIndexVerifyCmd) }

func newIndexVerifyCmd(g *globals) *cobra.Command {
	var (
		format string
		o      verify.Options
		quiet  bool
	)
	cmd := &cobra.Command{
		Use:   "verify NAME",
		Short: "Check every invariant of an index's stored tables against its source",
		Long: `verify checks a snapshot (default: the current one) of an index against every
invariant of the index-metadata spec, the IVF index schema and the Parquet
provider profile: metadata, centroid artifact and fingerprint, roots and
centroids, manifest, every postings file (sizes, footers, byte ranges,
checksums, one CID per row group, root buckets), row counts, keys (unique,
each resolving to exactly one source row), LVQ codes bit for bit against
the source vectors, the exact nearest-centroid assignment of every row, and
the source binding. It streams the postings and the source, so it works on
large indexes. Each check is printed with its result; the exit status is 0
when all pass and 1 when any fails. See the verify package documentation.`,
		Example: `  parqdb index verify words
  parqdb index verify words --snapshot 1 --format json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usagef("--format must be text or json, not %q", format)
			}
			if o.SnapshotID < 0 || o.Workers < 0 {
				return usagef("--snapshot and --workers must not be negative")
			}
			// Ctrl-C and SIGTERM as every long command: exit 130/143, a
			// second Ctrl-C at once (verify writes nothing to undo).
			return runLong(cmd, true, func(ctx context.Context, _ progressReporter) error {
				e, err := openEnv(ctx, g)
				if err != nil {
					return err
				}
				defer e.Close()
				if !quiet {
					errOut := cmd.ErrOrStderr()
					o.Progress = func(check string) { fmt.Fprintf(errOut, "verify: %s…\n", check) }
				}
				rep, err := verify.Run(ctx, verify.Env{Warehouse: e.wh, Catalog: e.cat}, args[0], o)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if format == "json" {
					enc := json.NewEncoder(out)
					enc.SetIndent("", "  ")
					enc.SetEscapeHTML(false)
					if err := enc.Encode(rep); err != nil {
						return err
					}
				} else if err := rep.WriteText(out); err != nil {
					return err
				}
				if !rep.OK() {
					return errSilent
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.Int64Var(&o.SnapshotID, "snapshot", 0, "snapshot id to verify (default: the current snapshot)")
	f.StringVar(&format, "format", "text", "output format: text or json")
	f.IntVar(&o.Workers, "workers", 0, "goroutines to use (default all cores); never changes the result")
	f.BoolVar(&o.Exhaustive, "exhaustive", false, "decide every row's nearest centroid by brute force (C·D float64 operations per row), also on large indexes")
	f.Int64Var(&o.MemoryLimit, "memory-limit", 0, "approximate bytes for the key map; larger indexes are joined in several passes (default 1 GiB)")
	intRange(f, "snapshot", 1, math.MaxInt64, "the current snapshot")
	intRange(f, "workers", 1, maxWorkers, "all cores")
	intRange(f, "memory-limit", 1<<20, math.MaxInt64, "1 GiB")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress output")
	return cmd
}
