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

// TestVectorsFileStatsAndHint: index describe shows whether the current
// snapshot has a vectors file (and its size); under a cache budget too
// small for the vector store, search --stats and bench count the vectors
// file's reads when the index has one, and otherwise the rows read from
// source pages, with one line suggesting --vectors-file.
func TestVectorsFileStatsAndHint(t *testing.T) {
	defer membudget.Default.SetLimit(membudget.Default.Limit())
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	for _, name := range []string{"plain", "withfile"} {
		args := []string{"--warehouse", wh, "index", "create", name, "--source", gloveSample,
			"--vector-field", "embedding", "--key-fields", "word", "--metric", "cosine", "--nlist", "50", "-q"}
		if name == "withfile" {
			args = append(args, "--vectors-file")
		}
		if _, errs, code := runSplit(t, args...); code != exitOK {
			t.Fatalf("index create %s: exit %d: %s", name, code, errs)
		}
	}

	// describe
	var d indexDescription
	out, errs, code := runSplit(t, "--warehouse", wh, "index", "describe", "withfile", "--format", "json")
	if code != exitOK || json.Unmarshal([]byte(out), &d) != nil || d.VectorsFile == nil {
		t.Fatalf("describe --format json: exit %d: %s%s", code, out, errs)
	}
	fi, err := os.Stat(filepath.Join(wh, filepath.FromSlash(d.VectorsFile.Location)))
	if err != nil || fi.Size() != d.VectorsFile.Size || d.VectorsFile.Size < 10000*50*4 {
		t.Fatalf("describe: vectors file %+v; on disk: %v", d.VectorsFile, err)
	}
	out, _, code = runSplit(t, "--warehouse", wh, "index", "describe", "withfile")
	if code != exitOK || describeField(out, "vectors-file") != d.VectorsFile.Location+" ("+formatBytes(d.VectorsFile.Size)+")" {
		t.Fatalf("describe: exit %d:\n%s", code, out)
	}
	out, _, code = runSplit(t, "--warehouse", wh, "index", "describe", "plain")
	if code != exitOK || !strings.HasPrefix(describeField(out, "vectors-file"), "none") {
		t.Fatalf("describe without a file: exit %d:\n%s", code, out)
	}
	d = indexDescription{}
	out, _, code = runSplit(t, "--warehouse", wh, "index", "describe", "plain", "--format", "json")
	if code != exitOK || json.Unmarshal([]byte(out), &d) != nil || d.VectorsFile != nil || strings.Contains(out, "vectors-file") {
		t.Fatalf("describe --format json without a file: exit %d: %s", code, out)
	}

	// search --stats
	qf := filepath.Join(dir, "q.fvecs")
	writeFvecs(t, qf, gloveQueries(5))
	search := func(name string) (searchStats, string) {
		t.Helper()
		_, errs, code := runSplit(t, "--warehouse", wh, "search", name, "--queries", qf, "-k", "5", "--nprobe", "8", "--refine", "3",
			"--format", "csv", "-o", filepath.Join(dir, "out.csv"), "--stats", "--cache-size", "1MiB")
		if code != exitOK {
			t.Fatalf("search %s: exit %d: %s", name, code, errs)
		}
		errs = strings.TrimSpace(errs)
		var st searchStats
		if err := json.Unmarshal([]byte(errs[strings.LastIndex(errs, "\n")+1:]), &st); err != nil {
			t.Fatalf("search %s --stats: the last line is not the stats: %v: %q", name, err, errs)
		}
		return st, errs
	}
	st, errs := search("withfile")
	if st.Refined == 0 || st.VecFileRequests == 0 || st.VecFileBytes < 50*4 || st.SourceVectorRows != 0 || strings.Contains(errs, "hint:") {
		t.Fatalf("search with the file: %d refined, %d vecfile requests, %d vecfile bytes, %d source rows: %s",
			st.Refined, st.VecFileRequests, st.VecFileBytes, st.SourceVectorRows, errs)
	}
	if st.PostingsBytes+st.VecFileBytes > st.BytesRead-st.SourceBytes {
		t.Fatalf("search with the file: postings %d + vectors file %d bytes exceed the warehouse's %d", st.PostingsBytes, st.VecFileBytes, st.BytesRead-st.SourceBytes)
	}
	st, errs = search("plain")
	if st.Refined == 0 || st.VecFileRequests != 0 || st.VecFileBytes != 0 || st.SourceVectorRows < st.Refined/2 ||
		strings.Count(errs, "hint:") != 1 || !strings.Contains(errs, "--vectors-file") {
		t.Fatalf("search without the file: %d refined, %d vecfile requests, %d source rows: %s",
			st.Refined, st.VecFileRequests, st.SourceVectorRows, errs)
	}

	// A filtered search answered by the list plan, whose refine a vectors
	// file would serve, gets the hint too. (The exact plan keeps its rows'
	// vectors per predicate and reads them by source row: searches it
	// answered print no hint.)
	filtered := func(where string) (searchStats, string) {
		t.Helper()
		_, errs, code := runSplit(t, "--warehouse", wh, "search", "plain", "--queries", qf, "-k", "5", "--refine", "3",
			"--where", where, "--format", "csv", "-o", filepath.Join(dir, "out.csv"), "--stats", "--cache-size", "1MiB")
		errs = strings.TrimSpace(errs)
		var st searchStats
		if code != exitOK || json.Unmarshal([]byte(errs[strings.LastIndex(errs, "\n")+1:]), &st) != nil {
			t.Fatalf("search --where %q: exit %d: %s", where, code, errs)
		}
		return st, errs
	}
	if st, errs := filtered("word < 'ab'"); st.FilterLists == 0 || st.SourceVectorRows == 0 || strings.Count(errs, "hint:") != 1 {
		t.Fatalf("list plan without the file: %d list-plan queries, %d source rows: %s", st.FilterLists, st.SourceVectorRows, errs)
	}

	// bench
	bench := func(name, format string) (string, string) {
		t.Helper()
		out, errs, code := runSplit(t, "--warehouse", wh, "bench", name, "--queries", qf, "-k", "5", "--nprobe", "8", "--refine", "3",
			"--format", format, "--threads", "1", "--cold-queries", "3", "--cache-size", "1MiB", "-q")
		if code != exitOK {
			t.Fatalf("bench %s: exit %d: %s", name, code, errs)
		}
		return out, errs
	}
	out, errs = bench("withfile", "json")
	var r benchRow
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &r); err != nil {
		t.Fatalf("bench json: %v: %q", err, out)
	}
	if r.ColdVecFileRequests == 0 || r.ColdVecFileBytes < 50*4 || r.ColdSourceVectorRows != 0 || r.SourceVectorRows != 0 || strings.Contains(errs, "hint:") {
		t.Fatalf("bench with the file: %+v: %s", r, errs)
	}
	out, errs = bench("plain", "json")
	r = benchRow{}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &r); err != nil {
		t.Fatalf("bench json: %v: %q", err, out)
	}
	if r.ColdVecFileRequests != 0 || r.ColdSourceVectorRows == 0 || r.SourceVectorRows == 0 || strings.Count(errs, "hint:") != 1 {
		t.Fatalf("bench without the file: %+v: %s", r, errs)
	}
	out, _ = bench("withfile", "table")
	if hdr := strings.Fields(strings.SplitN(out, "\n", 2)[0]); len(hdr) < 2 || hdr[len(hdr)-2] != "cold_vecfile_bytes/q" || hdr[len(hdr)-1] != "cold_vecfile_requests/q" {
		t.Fatalf("bench table header: %q", hdr)
	}
}

// describeField returns the value of field name in describe's text output.
func describeField(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if f, v, ok := strings.Cut(l, " "); ok && f == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
