package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/spf13/cobra"

	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/internal/pqnode"
	"github.com/parqdb/parqdb/internal/version"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/query/rowjson"
)

func init() { subcommands = append(subcommands, newSearchCmd) }

type searchFlags struct {
	vector, nearKey, nearKeyJSON string
	keys                         []string
	queries, queryColumn         string
	k, nprobe, refine            int
	recall                       float64
	columns                      []string
	snapshot                     int64
	format, output               string
	stats                        bool
	cacheSize                    string
	workers                      int
	where                        string
}

func newSearchCmd(g *globals) *cobra.Command {
	var f searchFlags
	cmd := &cobra.Command{
		Use:   "search NAME (--vector '[…]' | --near-key VALUE | --key COL=VALUE… | --near-key-json '[…]' | --queries FILE [--query-column COL])",
		Short: "Find the nearest source rows to a vector, to an existing row, or to each vector of a file",
		Long: `search routes each query to the nprobe nearest lists, scores their postings,
keeps the k best (re-scoring the best refine·k with exact source vectors when
--refine is set) and joins them to their source rows. Results keep the source
columns (all, or --columns) and add _distance: squared L2 for l2_squared;
½‖q̂ − x‖² = 1 − cos for cosine (see docs/search.md).

--near-key searches with the vector of the source row that has that key (the
row itself comes first); the value is taken verbatim, commas included. A
composite key is given field by field with repeated --key COL=VALUE, or as a
JSON array with --near-key-json '["a", 2]' (the HTTP API's "key" form). --queries reads a .fvecs, .npy or Parquet file (with
--query-column); with --format json the output is JSON Lines, one line per
query in input order: {"query": i, "results": [{…, "_distance": d}, …]}.

--where returns the k nearest rows among those for which the predicate is
true (never fewer than k when k rows match); see docs/search.md.

--recall 0.95 picks the cheapest nprobe and refine whose recall@10, measured
on the index's own rows, meets the target (with a small margin); the first
use of an index snapshot calibrates it (seconds) and stores the result
beside the postings. --stats reports the setting chosen.`,
		Example: `  parqdb search words --near-key king -k 5
  parqdb search words --vector '[0.1, …]' --columns word --format json
  parqdb search words --queries examples/glove/queries-100.fvecs --nprobe 16 --refine 4 --format csv --output out.csv --stats
  parqdb search words --queries examples/glove/queries-100.fvecs --recall 0.95 --stats
  parqdb search words --queries examples/glove/glove-10k.parquet --query-column embedding -k 1 --format csv --output all.csv
  parqdb search words --near-key king --where "rank > 1000 AND word LIKE 'p%'"`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSearch(cmd, g, args[0], f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.vector, "vector", "", "query vector as a JSON array")
	fl.StringVar(&f.nearKey, "near-key", "", "search near the source row with this key value, taken verbatim (one-field keys)")
	fl.StringArrayVar(&f.keys, "key", nil, "search near the source row whose key field COL is VALUE: COL=VALUE, repeated once per key field")
	fl.StringVar(&f.nearKeyJSON, "near-key-json", "", `search near the source row with this key as JSON: a scalar, or an array with one value per key field (["a", 2])`)
	fl.StringVar(&f.queries, "queries", "", "file of query vectors: .fvecs, .npy or Parquet")
	fl.StringVar(&f.queryColumn, "query-column", "", "vector column of a Parquet --queries file")
	fl.IntVarP(&f.k, "k", "k", query.DefaultK, fmt.Sprintf("number of results per query, %d to %d", query.MinK, query.MaxK))
	fl.IntVar(&f.nprobe, "nprobe", query.DefaultNProbe, fmt.Sprintf("number of lists to scan, %d to %d (above nlist: every list)", query.MinNProbe, query.MaxNProbe))
	fl.IntVar(&f.refine, "refine", 0, fmt.Sprintf("re-score the best refine·k candidates with exact source vectors, %d to %d (0: off)", query.MinRefine, query.MaxRefine))
	fl.Float64Var(&f.recall, "recall", 0, "target recall@k in (0, 1], e.g. 0.95: nprobe and refine come from the index's calibration (instead of --nprobe and --refine)")
	fl.StringSliceVar(&f.columns, "columns", nil, "source columns to return (default all)")
	fl.Int64Var(&f.snapshot, "snapshot", 0, "search this retained snapshot instead of the current one")
	fl.StringVar(&f.format, "format", "table", "output format: table, json (JSON Lines), csv or parquet")
	fl.StringVarP(&f.output, "output", "o", "", "write results to this file instead of standard output")
	fl.BoolVar(&f.stats, "stats", false, "print one JSON line of search statistics to standard error")
	fl.IntVar(&f.workers, "workers", 0, "queries searched at once for --queries (default all cores)")
	intRange(fl, "k", query.MinK, query.MaxK, "")
	intRange(fl, "nprobe", query.MinNProbe, query.MaxNProbe, "")
	intRange(fl, "refine", query.MinRefine, query.MaxRefine, "")
	floatRange(fl, "recall", 0, 1, "") // 0 itself is refused by checkRecallFlags: the range is (0, 1]
	intRange(fl, "snapshot", 1, math.MaxInt64, "the current snapshot")
	intRange(fl, "workers", 1, maxWorkers, "all cores")
	fl.StringVar(&f.where, "where", "", whereHelp)
	addCacheSizeFlag(fl, &f.cacheSize)
	return cmd
}

func runSearch(cmd *cobra.Command, g *globals, name string, f searchFlags) error {
	if err := applyCacheSize(f.cacheSize); err != nil {
		return err
	}
	n := 0
	for _, name := range []string{"vector", "near-key", "key", "near-key-json", "queries"} {
		if cmd.Flags().Changed(name) {
			n++
		}
	}
	if n != 1 {
		return usagef("give exactly one of --vector, --near-key, --key (once per key field), --near-key-json or --queries")
	}
	switch f.format {
	case "table", "json", "csv", "parquet":
	default:
		return usagef("--format must be table, json, csv or parquet, not %q", f.format)
	}
	if f.format == "parquet" && f.output == "" {
		if file, ok := cmd.OutOrStdout().(*os.File); ok && isTerminal(file) {
			return usagef("--format parquet writes binary data and standard output is a terminal: give --output FILE or redirect standard output to a file")
		}
	}
	if f.queryColumn != "" && f.queries == "" {
		return usagef("--query-column goes with --queries")
	}
	if err := checkRecallFlags(cmd, f.recall); err != nil {
		return err
	}
	where, err := parseWhere(f.where)
	if err != nil {
		return err
	}
	var qs [][]float32
	if f.vector != "" {
		v, err := parseVector(f.vector)
		if err != nil {
			return usageError{err}
		}
		qs = [][]float32{v}
	}
	if f.queries != "" {
		var err error
		if qs, err = readQueries(f.queries, f.queryColumn); err != nil {
			return err
		}
	}
	ctx := cmd.Context()
	e, err := openEnv(ctx, g)
	if err != nil {
		return err
	}
	defer e.Close()
	ix, err := query.Open(ctx, query.Env{Warehouse: e.wh, Catalog: e.cat}, name, query.OpenOptions{SnapshotID: f.snapshot})
	if err != nil {
		return err
	}
	defer ix.Close()
	warnStale(cmd.ErrOrStderr(), ix)
	if err := checkColumns(ix, f.columns); err != nil {
		return err
	}
	var nearKey []parquet.Value
	if texts, err := keyTexts(cmd, ix, f); err != nil {
		return err
	} else if texts != nil {
		if nearKey, err = ix.ParseKey(texts); err != nil {
			return usageError{err}
		}
	}
	opts := query.Options{K: f.k, NProbe: f.nprobe, Refine: f.refine, Columns: f.columns, Filter: where}
	// Build what the searches need beyond the postings (key map, vectors,
	// the --where bitmap) before the clock starts: it is part of opening,
	// done once per index.
	warmStart := time.Now()
	var rstats *recallStats
	if cmd.Flags().Changed("recall") {
		if rstats, err = chooseRecall(ctx, cmd, ix, f.recall, &opts); err != nil {
			return err
		}
	}
	finfo, err := prepareWhere(ctx, ix, where)
	if err != nil {
		return err
	}
	if err := ix.Warm(ctx, opts); err != nil {
		return err
	}
	warm := time.Since(warmStart)
	wh0, src0 := ix.StorageStats()
	start := time.Now()
	var results []*query.Result
	if nearKey != nil {
		var r *query.Result
		if r, err = ix.SearchNearKey(ctx, nearKey, opts); err == nil {
			results, qs = []*query.Result{r}, make([][]float32, 1)
		}
	} else {
		results, err = ix.SearchBatch(ctx, qs, opts, f.workers)
	}
	elapsed := time.Since(start)
	if err != nil {
		return err
	}
	if f.stats {
		wh1, src1 := ix.StorageStats()
		var st query.Stats
		for _, r := range results {
			st.Add(r.Stats)
		}
		line, _ := json.Marshal(searchStats{
			Queries: len(qs), Seconds: elapsed.Seconds(), QPS: float64(len(qs)) / elapsed.Seconds(),
			Candidates: st.Candidates, Refined: st.Refined, Lists: st.Lists, CachedLists: st.CachedLists,
			LeafDistances: st.LeafDistances, Rounds: st.Rounds,
			BytesRead:     wh1.BytesRead - wh0.BytesRead + src1.BytesRead - src0.BytesRead,
			Requests:      wh1.Requests - wh0.Requests + src1.Requests - src0.Requests,
			PostingsBytes: st.BytesRead, PostingsRequests: st.Requests,
			SourceBytes: src1.BytesRead - src0.BytesRead, SourceRequests: src1.Requests - src0.Requests,
			VecFileBytes: st.VectorFileBytes, VecFileRequests: st.VectorFileRequests, SourceVectorRows: st.SourceVectorRows,
			PrepareSeconds: warm.Seconds(), Kernels: query.KernelImpl(),
			CacheLimit: membudget.Default.Limit(), Caches: cacheStats(),
			filterStats: newFilterStats(where, finfo, st),
			Recall:      rstats,
		})
		vectorsFileHint(ctx, cmd.ErrOrStderr(), ix, float64(st.SourceVectorRows)/float64(max(len(qs), 1)), st.FilterExact > 0)
		fmt.Fprintln(cmd.ErrOrStderr(), string(line))
	}
	out := cmd.OutOrStdout()
	if f.output != "" {
		file, err := os.Create(f.output)
		if err != nil {
			return err
		}
		defer file.Close()
		out = file
	}
	bw := bufio.NewWriter(out)
	switch f.format {
	case "json":
		err = writeJSON(bw, results)
	case "csv":
		err = writeCSV(bw, results, len(qs) > 1)
	case "parquet":
		err = writeParquet(bw, ix, results)
	default:
		err = writeTable(bw, results, len(qs) > 1)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// keyTexts returns the key texts of --near-key, --key or --near-key-json
// in key-field order (nil when none is given).
func keyTexts(cmd *cobra.Command, ix *query.Index, f searchFlags) ([]string, error) {
	fields := ix.Snapshot().SourceKeyFields
	switch {
	case cmd.Flags().Changed("near-key"):
		if len(fields) != 1 {
			return nil, usagef("--near-key: index %q has a composite key (%s): give --key %s=… once per field, or --near-key-json '[…]' with one value per field",
				ix.Name(), strings.Join(fields, ", "), fields[0])
		}
		return []string{f.nearKey}, nil
	case cmd.Flags().Changed("near-key-json"):
		texts, err := query.KeyTextsJSON([]byte(f.nearKeyJSON))
		if err != nil {
			return nil, usagef("--near-key-json: %s", strings.TrimPrefix(err.Error(), query.ErrBadQuery.Error()+": "))
		}
		return texts, nil
	case cmd.Flags().Changed("key"):
		given := map[string]string{}
		for _, kv := range f.keys {
			col, val, ok := strings.Cut(kv, "=")
			switch {
			case !ok:
				return nil, usagef("--key %q: want COL=VALUE, COL one of the key fields (%s)", kv, strings.Join(fields, ", "))
			case !slices.Contains(fields, col):
				return nil, usagef("--key %q: %q is not a key field of index %q (key fields: %s)", kv, col, ix.Name(), strings.Join(fields, ", "))
			}
			if _, dup := given[col]; dup {
				return nil, usagef("--key: key field %q is given twice", col)
			}
			given[col] = val
		}
		texts := make([]string, len(fields))
		for i, c := range fields {
			v, ok := given[c]
			if !ok {
				return nil, usagef("--key: key field %q is missing: give --key %s=… (key fields: %s)", c, c, strings.Join(fields, ", "))
			}
			texts[i] = v
		}
		return texts, nil
	}
	return nil, nil
}

// checkColumns checks --columns against the index's source columns; an
// unknown one is a usage error listing the columns there are.
func checkColumns(ix *query.Index, cols []string) error {
	have := ix.Columns()
	for _, c := range cols {
		if c == metadata.ReservedField {
			return usagef("--columns: %s is always returned; do not list it", c)
		}
		if !slices.Contains(have, c) {
			return usagef("--columns: column %q is not in the source of index %q (columns: %s)", c, ix.Name(), strings.Join(have, ", "))
		}
	}
	return nil
}

// searchStats is the --stats line. Seconds covers the searches only: after
// the index is open and prepared (PrepareSeconds: key map and vectors, when
// needed), before any output. BytesRead and Requests count every storage
// read in that time, warehouse and source; the postings_, vecfile_ and
// source_ fields split them (the vectors file is in the warehouse).
// SourceVectorRows counts the exact vectors read from source pages because
// neither the vector store nor a vectors file held them (query.Stats).
type searchStats struct {
	Queries          int     `json:"queries"`
	Seconds          float64 `json:"seconds"`
	QPS              float64 `json:"qps"`
	Candidates       int64   `json:"candidates"`
	Refined          int64   `json:"refined"`
	Lists            int64   `json:"lists"`
	CachedLists      int64   `json:"cached_lists"`
	LeafDistances    int64   `json:"leaf_distances"`
	Rounds           int64   `json:"rounds"`
	BytesRead        int64   `json:"bytes_read"`
	Requests         int64   `json:"requests"`
	PostingsBytes    int64   `json:"postings_bytes"`
	PostingsRequests int64   `json:"postings_requests"`
	SourceBytes      int64   `json:"source_bytes"`
	SourceRequests   int64   `json:"source_requests"`
	VecFileBytes     int64   `json:"vecfile_bytes"`
	VecFileRequests  int64   `json:"vecfile_requests"`
	SourceVectorRows int64   `json:"source_vector_rows"`
	PrepareSeconds   float64 `json:"prepare_seconds"`
	Kernels          string  `json:"kernels"`
	// CacheLimit is the process budget of all caches (--cache-size);
	// Caches their hits, misses and bytes held, by cache.
	CacheLimit int64       `json:"cache_limit"`
	Caches     []cacheStat `json:"caches"`
	filterStats
	// Recall is the setting --recall chose (absent without --recall).
	Recall *recallStats `json:"recall,omitempty"`
}

// vectorsFileHint writes one line to w, before the --stats line (which
// stays the last), when searches read perQuery > 0 exact vectors per query
// from source pages and ix has no vectors file: such reads decode whole
// pages, which a vectors file replaces with ranged reads of the rows. The
// hint is advisory: a vectors file that cannot be opened (an error the
// searches would have reported had they read it) prints nothing, and
// neither do searches answered by a filter's exact plan (exactPlan): it
// reads the matching rows by source row, which a vectors file would not
// serve.
func vectorsFileHint(ctx context.Context, w io.Writer, ix *query.Index, perQuery float64, exactPlan bool) {
	if perQuery <= 0 || exactPlan {
		return
	}
	if _, ok, err := ix.VectorsFileSize(ctx); err != nil || ok {
		return
	}
	fmt.Fprintf(w, "hint: the searches read %.1f exact vectors per query from source pages (the vector store does not hold their lists, and index %q has no vectors file); `parqdb index create %s … --vectors-file` writes one that serves them with small ranged reads (docs/search.md)\n",
		perQuery, ix.Name(), ix.Name())
}

func writeJSON(w io.Writer, results []*query.Result) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i, r := range results {
		if err := enc.Encode(struct {
			Query   int           `json:"query"`
			Results []rowjson.Row `json:"results"`
		}{i, r.JSONRows()}); err != nil {
			return err
		}
	}
	return nil
}

// cellText formats a value for table and CSV output; long lists are
// abbreviated in tables.
func cellText(v any, abbreviate bool) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []byte:
		return string(x)
	case []any:
		if abbreviate && len(x) > 4 {
			return fmt.Sprintf("[%v, %v, %v, … %d values]", x[0], x[1], x[2], len(x))
		}
		parts := make([]string, len(x))
		for i := range x {
			parts[i] = cellText(x[i], abbreviate)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case float32:
		return fmt.Sprint(x)
	}
	return fmt.Sprint(v)
}

func writeTable(w io.Writer, results []*query.Result, batch bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, r := range results {
		if i == 0 {
			if batch {
				fmt.Fprint(tw, "query\t")
			}
			fmt.Fprintln(tw, strings.Join(r.Columns, "\t"))
		}
		for _, h := range r.Hits {
			if batch {
				fmt.Fprintf(tw, "%d\t", i)
			}
			for j, c := range r.Columns {
				if j > 0 {
					fmt.Fprint(tw, "\t")
				}
				if c == "_distance" {
					fmt.Fprint(tw, h.Distance)
				} else {
					fmt.Fprint(tw, cellText(h.Row[c], true))
				}
			}
			fmt.Fprintln(tw)
		}
	}
	return tw.Flush()
}

func writeCSV(w io.Writer, results []*query.Result, batch bool) error {
	cw := csv.NewWriter(w)
	for i, r := range results {
		if i == 0 {
			hdr := r.Columns
			if batch {
				hdr = append([]string{"query"}, hdr...)
			}
			cw.Write(hdr)
		}
		for _, h := range r.Hits {
			var rec []string
			if batch {
				rec = append(rec, fmt.Sprint(i))
			}
			for _, c := range r.Columns {
				if c == "_distance" {
					rec = append(rec, fmt.Sprint(h.Distance))
				} else {
					rec = append(rec, cellText(h.Row[c], false))
				}
			}
			cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeParquet writes the results as one Parquet file: query (int64, the
// query's position in the input), the result columns with their source
// types, then _distance (float).
func writeParquet(w io.Writer, ix *query.Index, results []*query.Result) error {
	var cols []string
	if len(results) > 0 {
		cols = results[0].Columns[:len(results[0].Columns)-1]
	}
	src := ix.SourceSchema()
	fields := []parquet.Field{pqnode.Field("query", parquet.Int(64))}
	for _, c := range cols {
		var f parquet.Field
		for _, sf := range src.Fields() {
			if sf.Name() == c {
				f = sf
			}
		}
		if f == nil {
			return fmt.Errorf("--format parquet: column %q is not in the source schema", c)
		}
		fields = append(fields, f)
	}
	fields = append(fields, pqnode.Field(metadata.ReservedField, parquet.Leaf(parquet.FloatType)))
	schema := parquet.NewSchema("results", pqnode.Group(fields...))
	pw := parquet.NewGenericWriter[map[string]any](w, schema, parquet.CreatedBy("parqdb", version.String()+" ", "search-results"))
	for qi, r := range results {
		for _, h := range r.Hits {
			row := make(map[string]any, len(cols)+2)
			for _, c := range cols {
				row[c] = h.Row[c]
			}
			row["query"] = int64(qi)
			row[metadata.ReservedField] = h.Distance
			if _, err := pw.Write([]map[string]any{row}); err != nil {
				return fmt.Errorf("--format parquet: query %d: %w", qi, err)
			}
		}
	}
	return pw.Close()
}
