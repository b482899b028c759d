package main

import (
	"bufio"
	"errors"

	"github.com/spf13/cobra"

	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server/serving"
	"github.com/parqdb/parqdb/server/sqlengine"
)

func init() { subcommands = append(subcommands, newSQLCmd) }

func newSQLCmd(g *globals) *cobra.Command {
	var (
		format, cacheSize, sqlMemory string
		noExternal                   bool
	)
	cmd := &cobra.Command{
		Use:   `sql "SELECT … FROM ivf_search('index', '[vector]', k) …"`,
		Short: "Run SQL with ParqDB's search functions in an embedded DuckDB",
		Long: `sql runs one SQL statement in an embedded DuckDB where

  ivf_search(index_name, query_vector, k)       the k nearest source rows, with
                                                their source columns and _distance,
                                                exactly as search returns them
  ivf_search_key(index_name, key, k)            the k nearest rows to the row with
                                                that key (comma-separated if composite)
  ivf_nearest(index_name, vector_expr, k)       scalar: a LIST of STRUCT(_distance,
                                                _row JSON), one search per row of
                                                another table; UNNEST it
  ivf_nearest_key(index_name, key_expr, k)      the same, near each row's key
  <index> (a view), source('<index>')           the index's source table

Optional named arguments, for each of the four search functions: nprobe := 16,
refine := 4, snapshot := 2, columns := ['word', 'rank'] (or 'word,rank'),
filter := 'rank < 100' (a search --where predicate; "where" := … also works).
NULL keeps a default. The query vector is a JSON array in a string, or a
list (FLOAT[], DOUBLE[]). Join and filter the results with SQL: the
statement runs with your rights and reads files and URLs (read_parquet,
read_csv, s3:// through DuckDB's httpfs) unless --no-external-access. The
same SQL runs over Arrow Flight SQL on parqdb-sql serve --flight, where only
the indexes' source Parquet files and --sql-allow-dir directories can be
read. Statements share --sql-memory (default half of --cache-size, at
least 256 MiB); nothing spills to disk, so one that needs more fails.

Needs the DuckDB build of parqdb, bin/parqdb-sql: make build-sql (or go build
-tags duckdb,duckdb_arrow; see docs/serve.md).`,
		Example: `  parqdb-sql sql "SELECT word, _distance FROM ivf_search_key('words', 'king', 10) WHERE word <> 'king'"
  parqdb-sql sql "SELECT word, rank, _distance FROM ivf_search_key('words', 'king', 5, nprobe := 16, refine := 4, columns := ['word', 'rank'])" --format json
  parqdb-sql sql "SELECT r.word, s.rank FROM ivf_search_key('words', 'queen', 5) r JOIN words s USING (word)"
  parqdb-sql sql "SELECT q.word, n._row->>'word' AS neighbour, n._distance FROM (FROM words LIMIT 3) q, UNNEST(ivf_nearest('words', q.embedding, 2)) AS t(n)" --format csv
  parqdb-sql sql "SELECT word, _distance FROM ivf_search_key('words', 'king', 5, filter := 'rank < 1000')"`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "table", "json", "csv":
			default:
				return usagef("--format must be table, json or csv, not %q", format)
			}
			if err := applyCacheSize(cacheSize); err != nil {
				return err
			}
			memLimit, err := parseSQLMemory(sqlMemory)
			if err != nil {
				return err
			}
			if !sqlengine.Available {
				return sqlengine.ErrUnavailable
			}
			ctx := cmd.Context()
			e, err := openEnv(ctx, g)
			if err != nil {
				return err
			}
			defer e.Close()
			pool := serving.NewPool(query.Env{Warehouse: e.wh, Catalog: e.cat}, serving.PoolOptions{RefreshInterval: -1, Logger: warnLogger(cmd.ErrOrStderr())})
			defer pool.Close()
			eng, err := sqlengine.New(pool, sqlengine.Options{ExternalAccess: !noExternal, MemoryLimit: memLimit})
			if err != nil {
				return err
			}
			defer eng.Close()
			bw := bufio.NewWriter(cmd.OutOrStdout())
			if err := eng.Print(ctx, args[0], bw, format); err != nil {
				if errors.Is(err, sqlengine.ErrSQL) {
					return usageError{err}
				}
				return err
			}
			return bw.Flush()
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output format: table, json (one object per row) or csv")
	cmd.Flags().BoolVar(&noExternal, "no-external-access", false, "read no files or URLs but the indexes' sources, and run only queries (as parqdb serve does)")
	addCacheSizeFlag(cmd.Flags(), &cacheSize)
	cmd.Flags().StringVar(&sqlMemory, "sql-memory", "", sqlMemoryHelp)
	return cmd
}
