package main

import (
	"bufio"
	"errors"

	"github.com/spf13/cobra"

	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/sqlengine"
)

func init() { subcommands = append(subcommands, newSQLCmd) }

func newSQLCmd(g *globals) *cobra.Command {
	var format, cacheSize string
	cmd := &cobra.Command{
		Use:   `sql "SELECT … FROM ivf_search('index', '[vector]', k) …"`,
		Short: "Run SQL with the ivf_search table function in an embedded DuckDB",
		Long: `sql runs one SQL statement in an embedded DuckDB where ivf_search(index,
query_vector, k [, nprobe [, refine]]) returns the k nearest source rows with
their source columns and _distance, exactly as search does; join and filter
them with SQL. The query vector is a JSON array in a string. The optional
arguments are positional: ivf_search('words', '[…]', 10, 16, 4, 2) searches
with nprobe 16 and refine 4 in snapshot 2 (NULL keeps a default); choose
columns in the SELECT list. ivf_search_key(index, key, k [, nprobe [, refine
[, snapshot]]]) searches near the row with that key. The same SQL runs over
Arrow Flight SQL on parqdb serve --flight.

Needs a binary built with -tags duckdb,duckdb_arrow (see docs/serve.md).`,
		Example: `  parqdb sql "SELECT word, _distance FROM ivf_search_key('words', 'king', 10) WHERE word <> 'king'"
  parqdb sql "SELECT r.word, r._distance FROM ivf_search('words', '[0.1, …]', 10) r ORDER BY r._distance" --format csv
  parqdb sql "SELECT word, rank, _distance FROM ivf_search_key('words', 'king', 5, 16, 4, 1)" --format json`,
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
			if !sqlengine.Available {
				return sqlengine.ErrUnavailable
			}
			ctx := cmd.Context()
			e, err := openEnv(ctx, g)
			if err != nil {
				return err
			}
			defer e.Close()
			pool := server.NewPool(query.Env{Warehouse: e.wh, Catalog: e.cat}, server.PoolOptions{RefreshInterval: -1})
			defer pool.Close()
			eng, err := sqlengine.New(pool, sqlengine.Options{})
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
	addCacheSizeFlag(cmd.Flags(), &cacheSize)
	return cmd
}
