package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/parqdb/parqdb/internal/membudget"
)

// cacheSizeHelp describes --cache-size, shared by search, bench, serve and
// sql.
var cacheSizeHelp = fmt.Sprintf("memory for all caches of all open indexes together (postings lists, exact vectors, decoded source pages, joined rows, filter bitmaps): bytes with a unit (512MiB, 2GiB) or a share of RAM (40%%); default %.0f%% of RAM", 100*membudget.DefaultFraction)

// addCacheSizeFlag defines --cache-size on fl, stored in *s.
func addCacheSizeFlag(fl *pflag.FlagSet, s *string) {
	fl.StringVar(s, "cache-size", "", cacheSizeHelp)
}

// applyCacheSize sets the process budget from a --cache-size value (empty:
// keep the default).
func applyCacheSize(s string) error {
	if s == "" {
		return nil
	}
	n, err := membudget.ParseSize(s)
	if err != nil {
		return usagef("--cache-size: %v", err)
	}
	membudget.Default.SetLimit(n)
	return nil
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
