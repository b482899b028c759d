package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/parqdb/parqdb/buildplan"
	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/vecfile"
)

func init() { subcommands = append(subcommands, newIndexCmd) }

func newIndexCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Create, inspect and list indexes",
	}
	cmd.AddCommand(newIndexCreateCmd(g), newIndexDescribeCmd(g), newIndexListCmd(g))
	for _, add := range indexSubcommands {
		cmd.AddCommand(add(g))
	}
	return cmd
}

// indexSubcommands registers `parqdb index …` subcommands from other files.
var indexSubcommands []func(*globals) *cobra.Command

func newIndexCreateCmd(g *globals) *cobra.Command {
	var o indexer.Options
	var quiet bool
	var shards int
	var calib bool
	cmd := &cobra.Command{
		Use:   "create NAME --source LOCATION --vector-field F --key-fields K1[,K2…]",
		Short: "Build an IVF index over a Parquet source and commit it to the catalog",
		Long: `create reads the Parquet source (a file or a folder of files, local or s3://…,
or an Apache Iceberg table, iceberg://CATALOG/NAMESPACE/TABLE: see docs/iceberg.md),
checks every row against the source contract, trains hierarchical k-means on a
seeded sample, assigns and encodes every row, writes the index tables to the
warehouse and commits the first snapshot to the catalog. Nothing is committed
unless every stage succeeds.

Defaults: metric l2_squared, encoding lvq8, nlist min(round(4·√N), N/39), roots
round(√nlist), seed 1, a sample of min(N, max(64·nlist, 10000)) rows capped at
384 MiB of vectors. See docs/build.md.`,
		Example: `  parqdb index create words --source examples/glove/glove-10k.parquet \
      --vector-field embedding --key-fields word --metric cosine`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			m, err := canonicalMetric(o.Metric)
			if err != nil {
				return err
			}
			o.Metric = m
			if err := o.Validate(); err != nil {
				return usageError{err}
			}
			if o.VectorsFile && shards > 0 {
				return usagef("--vectors-file needs the build to run in this process; a sharded build writes no vectors file (docs/parquet-provider-profile.md §4.2)")
			}
			if calib && shards > 0 {
				return usagef("--calibrate needs the build to commit in this process; with --shards, calibrate once the shards are committed: parqdb index refresh %s --calibrate", o.Name)
			}
			return runLongNewEnv(cmd, g, quiet, func(ctx context.Context, e *env, p progressReporter) error {
				limitBuildMemory()
				o.Progress = p
				if shards > 0 {
					pr, err := indexer.Plan(ctx, indexer.Env{Warehouse: e.wh, Catalog: e.cat}, o, shards)
					if err != nil {
						return err
					}
					p.Close()
					printPlanSummary(cmd.OutOrStdout(), pr)
					return nil
				}
				res, err := indexer.Create(ctx, indexer.Env{Warehouse: e.wh, Catalog: e.cat}, o)
				if err != nil {
					return err
				}
				p.Close()
				printBuildSummary(cmd.OutOrStdout(), res)
				if calib {
					return calibrateIndex(ctx, cmd.OutOrStdout(), e, o.Name)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Source, "source", "", "source table: a Parquet file or folder, local path or s3://bucket/key, or an Iceberg table iceberg://catalog/namespace/table (required)")
	f.StringVar(&o.VectorField, "vector-field", "", "vector column, list<float> or list<double> (required)")
	f.StringSliceVar(&o.KeyFields, "key-fields", nil, "comma-separated source key columns, unique per row (required)")
	f.StringVar(&o.Metric, "metric", indexer.DefaultMetric, "distance metric: l2_squared (also l2, euclidean) or cosine (also cos); stored as l2_squared or cosine")
	f.IntVar(&o.NList, "nlist", 0, "number of IVF lists (default min(round(4·√N), N/39))")
	f.StringVar(&o.Encoding, "encoding", indexer.DefaultEncoding, "posting encoding: lvq8, lvq4 or source")
	f.Uint64Var(&o.Seed, "seed", indexer.DefaultSeed, "seed for sampling and k-means")
	f.IntVar(&o.SampleRows, "sample-rows", 0, "training sample rows (default min(N, max(64·nlist, 10000)), memory-capped)")
	f.IntVar(&o.Roots, "roots", 0, "number of root centroids (default round(√nlist))")
	f.StringVar(&o.ReuseCentroids, "reuse-centroids", indexer.ReuseAuto, "auto: reuse the centroids of an index over the same exact source state; never: always train")
	f.IntVar(&o.Workers, "workers", 0, "goroutines to use (default all cores); never changes the result")
	f.IntVar(&shards, "shards", 0, shardsFlagUsage)
	f.BoolVar(&calib, "calibrate", false, calibrateFlagUsage)
	f.BoolVar(&o.VectorsFile, "vectors-file", false, "also write the vectors file: the exact float32 vectors in postings order (N·D·4 bytes), read by refine when the vector store does not fit the cache (docs/parquet-provider-profile.md §4.2)")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress output")
	intRange(f, "shards", 1, buildplan.MaxShards, "a build in this process")
	intRange(f, "nlist", 1, math.MaxInt32, "the default")
	uintRange(f, "seed", 0, math.MaxUint64, "")
	intRange(f, "sample-rows", 1, math.MaxInt32, "the default")
	intRange(f, "roots", 1, math.MaxInt32, "the default")
	intRange(f, "workers", 1, maxWorkers, "all cores")
	return cmd
}

func printBuildSummary(w io.Writer, r *indexer.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "index\t%s\n", r.Name)
	fmt.Fprintf(tw, "rows\t%d\n", r.Rows)
	fmt.Fprintf(tw, "dimension\t%d\n", r.Dim)
	fmt.Fprintf(tw, "nlist\t%d (%d roots)\n", r.NList, r.Roots)
	fmt.Fprintf(tw, "encoding\t%s\n", r.Encoding)
	if r.ReusedCentroids {
		fmt.Fprintf(tw, "centroids\treused %s\n", r.CentroidsMetadataLocation)
	} else {
		fmt.Fprintf(tw, "centroids\ttrained on %d sample rows\n", r.SampleRows)
	}
	var total time.Duration
	var parts []string
	for _, s := range r.Stages {
		total += s.Duration
		parts = append(parts, fmt.Sprintf("%s %s", s.Stage, s.Duration.Round(time.Millisecond)))
	}
	fmt.Fprintf(tw, "time\t%s (%s)\n", total.Round(time.Millisecond), strings.Join(parts, ", "))
	fmt.Fprintf(tw, "written\t%s in %d files\n", formatBytes(r.BytesWritten), r.Files)
	fmt.Fprintf(tw, "metadata\t%s\n", r.MetadataLocation)
	for _, w := range r.Warnings {
		fmt.Fprintf(tw, "warning\t%s\n", w)
	}
	tw.Flush()
}

func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// indexDescription is what `index describe --format json` prints.
type indexDescription struct {
	Name             string             `json:"name"`
	MetadataLocation string             `json:"metadata-location"`
	IndexUUID        string             `json:"index-uuid"`
	Snapshot         *metadata.Snapshot `json:"snapshot"`
	// Calibration is the current snapshot's stored calibration for
	// search --recall (absent when there is none).
	Calibration *calibrationDescription `json:"calibration,omitempty"`
	// VectorsFile is the current snapshot's vectors file (profile §4.2;
	// absent when it has none): its warehouse key and size, from a stat
	// of the location the manifest implies (no read).
	VectorsFile *vectorsFileDescription `json:"vectors-file,omitempty"`
	// Stale and StaleReason: checkStale of the current snapshot.
	Stale       *bool  `json:"stale"`
	StaleReason string `json:"stale-reason,omitempty"`
	// SourceColumns are the source's top-level columns and their types
	// (query.SourceColumns: one footer read); SourceColumnsError says why
	// they could not be read instead.
	SourceColumns      []query.Column `json:"source-columns"`
	SourceColumnsError string         `json:"source-columns-error,omitempty"`
}

type vectorsFileDescription struct {
	Location string `json:"location"`
	Size     int64  `json:"size"`
}

// describeVectorsFile stats the vectors file of snapshot s (nil when it
// has none).
func describeVectorsFile(ctx context.Context, wh storage.Bucket, s *metadata.Snapshot) (*vectorsFileDescription, error) {
	if s == nil {
		return nil, nil
	}
	t, ok := s.IndexTables[metadata.RolePostings]
	if !ok || t.Properties["location"] == "" {
		return nil, nil
	}
	key := vecfile.Location(postings.SnapshotLayout(s).Meta)
	info, err := wh.Stat(ctx, key)
	if errors.Is(err, storage.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("vectors file %s: %w", key, err)
	}
	return &vectorsFileDescription{Location: key, Size: info.Size}, nil
}

func newIndexDescribeCmd(g *globals) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "describe NAME",
		Short: "Show an index's current metadata location, snapshot, parameters, staleness and source columns",
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
				d := indexDescription{Name: args[0], MetadataLocation: entry.MetadataLocation, IndexUUID: m.IndexUUID, Snapshot: m.CurrentSnapshot()}
				if d.Calibration, err = describeCalibration(ctx, e, m); err != nil {
					return err
				}
				if d.VectorsFile, err = describeVectorsFile(ctx, e.wh, d.Snapshot); err != nil {
					return err
				}
				st := checkStale(ctx, e.wh, d.Snapshot, d.Name)
				d.Stale, d.StaleReason = st.Stale, st.Reason
				if d.SourceColumns, err = query.SourceColumns(ctx, e.wh, d.Snapshot); err != nil {
					d.SourceColumnsError = err.Error()
				}
				out := cmd.OutOrStdout()
				if format == "json" {
					enc := json.NewEncoder(out)
					enc.SetIndent("", "  ")
					enc.SetEscapeHTML(false)
					return enc.Encode(d)
				}
				s := d.Snapshot
				tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
				fmt.Fprintf(tw, "index\t%s\n", d.Name)
				fmt.Fprintf(tw, "index-uuid\t%s\n", d.IndexUUID)
				fmt.Fprintf(tw, "metadata\t%s\n", d.MetadataLocation)
				fmt.Fprintf(tw, "snapshot\t%d (sequence %d, %s)\n", s.SnapshotID, s.SequenceNumber, time.UnixMilli(s.TimestampMs).UTC().Format(time.RFC3339))
				fmt.Fprintf(tw, "source\t%s\n", s.SourceTable.Properties["location"])
				if id := s.SourceTable.Properties["snapshot-id"]; id != "" {
					fmt.Fprintf(tw, "source-snapshot\t%s\n", id) // an Iceberg table's snapshot
				}
				fmt.Fprintf(tw, "vector-field\t%s\n", s.VectorField)
				fmt.Fprintf(tw, "key-fields\t%s\n", strings.Join(s.SourceKeyFields, ","))
				fmt.Fprintf(tw, "rows\t%d\n", s.IndexedRows)
				fmt.Fprintf(tw, "metric\t%s\n", s.Metric)
				for _, k := range []string{metadata.ParamDimension, metadata.ParamNList, metadata.ParamPostingEncoding, metadata.ParamCentroidsLocation} {
					fmt.Fprintf(tw, "%s\t%s\n", k, s.Parameters[k])
				}
				fmt.Fprintf(tw, "postings\t%s\n", s.IndexTables[metadata.RolePostings].Properties["location"])
				if vf := d.VectorsFile; vf != nil {
					fmt.Fprintf(tw, "vectors-file\t%s (%s)\n", vf.Location, formatBytes(vf.Size))
				} else {
					fmt.Fprintf(tw, "vectors-file\tnone (index create --vectors-file writes one; refine then reads it when the vector store does not fit the cache)\n")
				}
				writeCalibrationText(tw, d.Calibration)
				fmt.Fprintf(tw, "stale\t%s\n", st.cell())
				if st.Reason != "" {
					fmt.Fprintf(tw, "stale-reason\t%s\n", st.Reason)
				}
				if d.SourceColumnsError != "" {
					fmt.Fprintf(tw, "source-columns\t? (%s)\n", d.SourceColumnsError)
				}
				for i, c := range d.SourceColumns {
					label := ""
					if i == 0 {
						label = "source-columns"
					}
					fmt.Fprintf(tw, "%s\t%s %s\n", label, c.Name, c.Type)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
}

// indexListRow is one index of `parqdb index list`, the same fields in
// every format (table, json, csv). JSON keys are spelled as in the HTTP
// API's index description (GET /v1/indexes/{name}); csv and table headers
// are the same names.
type indexListRow struct {
	Name             string            `json:"name"`
	IndexedRows      int64             `json:"indexed_rows"`
	Metric           string            `json:"metric"`
	Encoding         string            `json:"encoding"`
	NList            int               `json:"nlist"`
	Dimension        int               `json:"dimension"`
	Source           map[string]string `json:"source"`
	MetadataLocation string            `json:"metadata_location"`
	// staleState: whether the source gained data the current snapshot
	// does not index, or moved under it (checkStale).
	staleState
	// Error says why the index's metadata could not be loaded; the other
	// fields but name are then empty.
	Error string `json:"error,omitempty"`
}

// indexListColumns are the csv columns, in order.
var indexListColumns = []string{"name", "indexed_rows", "metric", "encoding", "nlist", "dimension", "stale", "source", "metadata_location", "error"}

// indexListTable are the table's headers for indexListColumns: shorter,
// so that a typical index fits 80 columns.
var indexListTable = []string{"NAME", "ROWS", "METRIC", "ENC", "NLIST", "DIM", "STALE", "SOURCE", "METADATA", "ERROR"}

// cells returns the row's csv cells, in indexListColumns order.
func (r indexListRow) cells() []string {
	if r.Error != "" {
		return []string{r.Name, "", "", "", "", "", "", "", "", r.Error}
	}
	return []string{r.Name, fmt.Sprint(r.IndexedRows), r.Metric, r.Encoding, fmt.Sprint(r.NList), fmt.Sprint(r.Dimension),
		r.cell(), r.Source["location"], r.MetadataLocation, ""}
}

func newIndexListCmd(g *globals) *cobra.Command {
	var format string
	var verbose bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the indexes in the catalog",
		Long: `list prints, per index: name, indexed_rows, metric, encoding, nlist,
dimension, stale, source (its location), metadata_location and, when its
metadata cannot be loaded, error. --format json prints one JSON array with
the HTTP API's key spelling (and stale_reason when stale); csv has every
field. The table (the default) abbreviates the headers (ROWS, ENC, DIM),
shows a local source below the working folder as a relative path, and
leaves out metadata_location unless -v, and error when no index has one,
so that a typical index fits 80 columns.

stale is true when the source gained data the current snapshot does not
index (files added to a folder source, newer Iceberg snapshots: searches
still answer from the snapshot) or a file the snapshot recorded was removed
or rewritten (searches fail until a refresh); ? when the source could not be
checked. Checking lists each source once.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "table", "text", "json", "csv":
			default:
				return usagef("--format must be table, json or csv, not %q", format)
			}
			ctx := cmd.Context()
			return withEnv(ctx, g, func(e *env) error {
				names, err := e.cat.List(ctx)
				if err != nil {
					return err
				}
				rows := make([]indexListRow, 0, len(names))
				broken := false
				for _, n := range names {
					r := indexListRow{Name: n}
					m, entry, err := catalog.LoadMetadata(ctx, e.cat, e.wh, n)
					if err != nil {
						r.Error = err.Error()
						rows = append(rows, r)
						broken = true
						continue
					}
					s := m.CurrentSnapshot()
					r.IndexedRows, r.Metric, r.MetadataLocation = s.IndexedRows, s.Metric, entry.MetadataLocation
					r.Source = map[string]string{"provider": s.SourceTable.Provider, "location": s.SourceTable.Properties["location"]}
					if p, err := s.IVF(); err == nil {
						r.Encoding, r.NList, r.Dimension = p.PostingEncoding, int(p.NList), int(p.Dimension)
					}
					r.staleState = checkStale(ctx, e.wh, s, n)
					rows = append(rows, r)
				}
				if err := writeIndexList(cmd.OutOrStdout(), format, rows, verbose); err != nil {
					return err
				}
				if broken { // every index is listed; an unreadable one is a problem (exit 1)
					return errSilent
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output format: table, json or csv")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "table: add the metadata location")
	return cmd
}

// writeIndexList writes rows as a table, a JSON array or CSV; the table
// has the metadata location only when verbose.
func writeIndexList(w io.Writer, format string, rows []indexListRow, verbose bool) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(rows)
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write(indexListColumns)
		for _, r := range rows {
			cw.Write(r.cells())
		}
		cw.Flush()
		return cw.Error()
	}
	errs := false
	for _, r := range rows {
		errs = errs || r.Error != ""
	}
	keep := func(row []string) []string {
		out := make([]string, 0, len(row))
		for i, c := range row {
			switch indexListColumns[i] {
			case "metadata_location":
				if !verbose {
					continue
				}
			case "error":
				if !errs {
					continue
				}
			}
			out = append(out, c)
		}
		return out
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(keep(indexListTable), "\t"))
	for _, r := range rows {
		c := r.cells()
		c[7] = displayLocation(c[7])
		fmt.Fprintln(tw, strings.TrimRight(strings.Join(keep(c), "\t"), "\t"))
	}
	return tw.Flush()
}
