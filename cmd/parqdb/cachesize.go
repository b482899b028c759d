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
	if err := setBudget(s); err != nil {
		return err
	}
	limitSearchMemory(membudget.Default.Limit())
	return nil
}

// setBudget sets the process budget from a --cache-size value (empty: keep
// the default).
func setBudget(s string) error {
	if s != "" {
		n, err := membudget.ParseSize(s)
		if err != nil {
			return usagef("--cache-size: %v", err)
		}
		membudget.Default.SetLimit(n)
	}
	return nil
}

// joinMemoryHelp describes --cache-size on join and join-shard, where it
// bounds the whole process (applyJoinMemory).
var joinMemoryHelp = fmt.Sprintf("memory for the whole join process: its caches (postings lists, exact vectors) get 7/8 of it, the query batches in flight and the rest of the heap the remaining 1/8, and Go's soft memory limit is this size: bytes with a unit (512MiB, 2GiB) or a share of RAM (40%%); default %.0f%% of RAM", 100*membudget.DefaultFraction)

// applyJoinMemory is applyCacheSize for join and join-shard, batch jobs
// that run alone in their process: the --cache-size value (default a
// quarter of RAM) bounds the process, not only its caches. The caches get
// all but 1/joinHeapShare of it; the batches in flight (knnjoin sizes
// three of them to 1/16 of the caches' budget), the decoders' garbage and
// the Go runtime the rest; and the soft memory limit is the value itself
// (unless GOMEMLIMIT is set), so that the collector keeps the peak RSS
// near it: 5.9 GiB for the 10M × 96 join of docs/benchmarks.md with the
// default 6 GiB, where budget + ¼ + 1 GiB let it reach 8.5 GB for 3 %
// less CPU.
func applyJoinMemory(s string) error {
	if err := setBudget(s); err != nil {
		return err
	}
	total := membudget.Default.Limit()
	membudget.Default.SetLimit(total - total/joinHeapShare)
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(total)
	}
	return nil
}

// joinHeapShare: a join's caches get all but 1/joinHeapShare of its memory.
const joinHeapShare = 8

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
