package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/pflag"

	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/server/sqlengine"
)

// cacheSizeHelp describes --cache-size, shared by search, bench, serve and
// sql.
var cacheSizeHelp = fmt.Sprintf("memory for all caches of all open indexes together (postings lists, exact vectors, decoded source pages, joined rows, filter bitmaps): bytes with a unit (512MiB, 2GiB) or a share of RAM (40%%); default %.0f%% of RAM", 100*membudget.DefaultFraction)

// addCacheSizeFlag defines --cache-size on fl, stored in *s.
func addCacheSizeFlag(fl *pflag.FlagSet, s *string) {
	fl.StringVar(s, "cache-size", "", cacheSizeHelp)
}

// applyCacheSize sets the process budget from a --cache-size value (empty:
// keep the default), then the soft memory limit that follows from it
// (limitSearchMemory).
func applyCacheSize(s string) error {
	if s != "" {
		n, err := membudget.ParseSize(s)
		if err != nil {
			return usagef("--cache-size: %v", err)
		}
		membudget.Default.SetLimit(n)
	}
	limitSearchMemory(membudget.Default.Limit())
	return nil
}

// searchHeapSlack is what the soft memory limit of search, bench, serve
// and sql allows beyond the cache budget and a quarter of it (the caches'
// sizes are estimates): queries in flight, answers, the key map, the Go
// runtime.
const searchHeapSlack = 1 << 30

// limitSearchMemory sets the soft memory limit (runtime/debug) to
// searchMemoryLimit(budget) unless the user set GOMEMLIMIT. Without it the
// garbage collector lets the heap grow to twice the live heap: a 10M × 96
// bench peaked at 11.3 GB RSS with a 6.3 GB cache budget
// (docs/benchmarks.md, "10M rows").
func limitSearchMemory(budget int64) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(searchMemoryLimit(budget))
	}
}

// searchMemoryLimit is the soft memory limit for a cache budget.
func searchMemoryLimit(budget int64) int64 {
	return budget + budget/4 + searchHeapSlack
}

// cacheStat is one cache's line in --stats and bench's cache summary.
type cacheStat struct {
	Name      string  `json:"name"`
	Hits      int64   `json:"hits"`
	Misses    int64   `json:"misses"`
	HitRate   float64 `json:"hit_rate"`
	Evictions int64   `json:"evictions"`
	Bytes     int64   `json:"bytes"`
}

// cacheStats returns the process budget's caches for --stats.
func cacheStats() []cacheStat {
	var out []cacheStat
	for _, s := range membudget.Default.Stats() {
		out = append(out, cacheStat{Name: s.Name, Hits: s.Hits, Misses: s.Misses, HitRate: s.HitRate(), Evictions: s.Evictions, Bytes: s.Bytes})
	}
	return out
}

// sqlMemoryHelp describes --sql-memory, shared by serve and sql.
const sqlMemoryHelp = "memory for the SQL engine's statements together (DuckDB's memory_limit; nothing spills to disk, a statement that needs more fails): bytes with a unit (256MiB, 2GiB) or a share of RAM (10%); default half of --cache-size, at least 256 MiB"

// parseSQLMemory parses a --sql-memory value (empty: 0, the engine's
// default).
func parseSQLMemory(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := membudget.ParseSize(s)
	if err != nil {
		return 0, usagef("--sql-memory: %v", err)
	}
	if n < sqlengine.MinMemoryLimit {
		return 0, usagef("--sql-memory %s: below the minimum of 16MiB", s)
	}
	return n, nil
}
