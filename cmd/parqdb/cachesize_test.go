package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/internal/membudget"
)

// TestCacheSizeAndStats: --cache-size sets the process budget that
// --stats reports, with each cache's hits and misses (refine filled the
// vector store and then read from it; the joined rows and a --where
// bitmap are counted and charged too); a bad size is a usage error that
// names the flag. The soft memory limit follows the budget (before, the
// heap of a search could grow to twice the caches: 11.3 GB at 10M rows).
func TestCacheSizeAndStats(t *testing.T) {
	defer membudget.Default.SetLimit(membudget.Default.Limit())
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	wh := gloveWarehouse(t)
	qf := filepath.Join(t.TempDir(), "q.fvecs")
	writeFvecs(t, qf, gloveQueries(5))
	args := []string{"--warehouse", wh, "search", "words", "--queries", qf, "-k", "3", "--nprobe", "8", "--refine", "2",
		"--format", "csv", "-o", filepath.Join(t.TempDir(), "out.csv"), "--stats"}
	_, errs, code := runSplit(t, append(args, "--cache-size", "64MiB")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var st struct {
		CacheLimit int64       `json:"cache_limit"`
		Caches     []cacheStat `json:"caches"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(errs)), &st); err != nil {
		t.Fatalf("--stats: %v: %q", err, errs)
	}
	if st.CacheLimit != 64<<20 {
		t.Fatalf("cache_limit %d, want %d", st.CacheLimit, 64<<20)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if got, want := debug.SetMemoryLimit(-1), int64(64<<20+16<<20+1<<30); got != want {
			t.Fatalf("soft memory limit %d after --cache-size 64MiB, want %d (budget + a quarter + 1 GiB)", got, want)
		}
	}
	by := map[string]cacheStat{}
	for _, c := range st.Caches {
		by[c.Name] = c
	}
	if v := by["vectors"]; v.Hits == 0 || v.Bytes == 0 || v.HitRate <= 0 || v.HitRate > 1 {
		t.Fatalf("vectors cache %+v: want hits and bytes held (%s)", v, errs)
	}
	if p := by["postings"]; p.Misses == 0 || p.Bytes == 0 {
		t.Fatalf("postings cache %+v: want the first reads as misses (%s)", p, errs)
	}
	if r := by["rows"]; r.Misses == 0 || r.Bytes == 0 {
		t.Fatalf("rows cache %+v: want the joined rows counted and charged (%s)", r, errs)
	}
	_, errs, code = runSplit(t, append(args, "--cache-size", "64MiB", "--where", "rank > 10")...)
	if code != exitOK {
		t.Fatalf("--where: exit %d: %s", code, errs)
	}
	st.Caches = nil
	if err := json.Unmarshal([]byte(strings.TrimSpace(errs)), &st); err != nil {
		t.Fatalf("--stats: %v: %q", err, errs)
	}
	for _, c := range st.Caches {
		by[c.Name] = c
	}
	if fc := by["filters"]; fc.Misses == 0 || fc.Bytes == 0 {
		t.Fatalf("filters cache %+v: want the bitmap counted and charged (%s)", fc, errs)
	}
	_, errs, code = runSplit(t, append(args, "--cache-size", "lots")...)
	if code != exitUsage || !strings.Contains(errs, "--cache-size") || !strings.Contains(errs, `"lots"`) {
		t.Fatalf("bad --cache-size: exit %d: %s", code, errs)
	}
}

// TestJoinMemory: on join, --cache-size bounds the process: the caches
// get 7/8 of it and the soft memory limit is the value itself, so that
// the peak RSS of a join stays near it; a bad size names the flag.
func TestJoinMemory(t *testing.T) {
	defer membudget.Default.SetLimit(membudget.Default.Limit())
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	wh := gloveWarehouse(t)
	args := []string{"--warehouse", wh, "join", "words", "--queries-table", gloveSample, "--query-key", "word",
		"--query-vector", "embedding", "-k", "3", "--output", filepath.Join(t.TempDir(), "knn"), "-q"}
	out, errs, code := runSplit(t, append(args, "--cache-size", "64MiB")...)
	if code != exitOK || !strings.Contains(out, "queries  10000") {
		t.Fatalf("join: exit %d: %s%s", code, out, errs)
	}
	if got, want := membudget.Default.Limit(), int64(56<<20); got != want {
		t.Fatalf("cache budget %d after join --cache-size 64MiB, want %d (7/8 of it)", got, want)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if got, want := debug.SetMemoryLimit(-1), int64(64<<20); got != want {
			t.Fatalf("soft memory limit %d after join --cache-size 64MiB, want %d", got, want)
		}
	}
	_, errs, code = runSplit(t, append(args, "--cache-size", "lots")...)
	if code != exitUsage || !strings.Contains(errs, "--cache-size") || !strings.Contains(errs, `"lots"`) {
		t.Fatalf("bad --cache-size: exit %d: %s", code, errs)
	}
}
