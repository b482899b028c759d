package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/icesource/icetest"
	"github.com/parqdb/parqdb/knnjoin"
)

// joinRow is a row of a join of the GloVe sample with itself.
type joinRow struct {
	QueryWord string  `parquet:"query_word"`
	Word      string  `parquet:"word"`
	Distance  float32 `parquet:"_distance"`
	Rank      int32   `parquet:"_rank"`
}

// searchRow is a row of search --format parquet --columns word.
type searchRow struct {
	Query    int64   `parquet:"query"`
	Word     string  `parquet:"word"`
	Distance float32 `parquet:"_distance"`
}

// readJoinOutput reads a committed join output folder with parquet-go: the
// parts _SUCCESS names (every visible file must be one), by query word.
func readJoinOutput(t *testing.T, dir string) map[string][]joinRow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, knnjoin.SuccessKey))
	if err != nil {
		t.Fatal(err)
	}
	s, err := knnjoin.ParseSuccess(knnjoin.SuccessKey, data)
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, p := range s.Parts {
		named = append(named, p.Key)
	}
	if v := visibleFiles(t, dir); !slices.Equal(v, named) {
		t.Fatalf("visible files %v, _SUCCESS names %v", v, named)
	}
	out := map[string][]joinRow{}
	for _, p := range s.Parts {
		rows, err := parquet.ReadFile[joinRow](filepath.Join(dir, p.Key))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			out[r.QueryWord] = append(out[r.QueryWord], r)
		}
	}
	return out
}

// visibleFiles lists the files under dir that Parquet readers see (no path
// segment starting with '_' or '.'), relative to dir.
func visibleFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel != "." && (strings.HasPrefix(d.Name(), "_") || strings.HasPrefix(d.Name(), ".")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

// TestJoinCLIMatchesSearch: parqdb join's rows equal parqdb search
// --queries over the same vectors with the same options (keys and
// distances bit for bit); with --self they equal search -k k+1 without
// each query's own row.
func TestJoinCLIMatchesSearch(t *testing.T) {
	wh := gloveWarehouse(t)
	dir := t.TempDir()
	words, err := parquet.ReadFile[struct {
		Word string `parquet:"word"`
	}](gloveSample)
	if err != nil {
		t.Fatal(err)
	}
	for _, self := range []bool{false, true} {
		name := map[bool]string{false: "k10", true: "self"}[self]
		t.Run(name, func(t *testing.T) {
			k := "10"
			if self {
				k = "11"
			}
			sout := filepath.Join(dir, name+".parquet")
			if _, errs, code := runSplit(t, "--warehouse", wh, "search", "words", "--queries", gloveSample, "--query-column", "embedding",
				"-k", k, "--nprobe", "6", "--columns", "word", "--format", "parquet", "--output", sout); code != exitOK {
				t.Fatalf("search: exit %d: %s", code, errs)
			}
			args := []string{"--warehouse", wh, "join", "words", "--queries-table", gloveSample, "--query-key", "word", "--query-vector", "embedding",
				"-k", "10", "--nprobe", "6", "--output", filepath.Join(dir, name), "-q"}
			if self {
				args = append(args, "--self")
			}
			out, errs, code := runSplit(t, args...)
			if code != exitOK || !strings.Contains(out, "queries  10000") {
				t.Fatalf("join: exit %d: %s%s", code, out, errs)
			}
			srows, err := parquet.ReadFile[searchRow](sout)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]joinRow{}
			for _, r := range srows {
				q := words[r.Query].Word
				want[q] = append(want[q], joinRow{QueryWord: q, Word: r.Word, Distance: r.Distance})
			}
			got := readJoinOutput(t, filepath.Join(dir, name))
			if len(got) != len(words) || len(want) != len(words) {
				t.Fatalf("%d queries joined, %d searched, want %d", len(got), len(want), len(words))
			}
			dropped := 0
			for q, w := range want {
				if self {
					if j := slices.IndexFunc(w, func(r joinRow) bool { return r.Word == q }); j >= 0 {
						w = slices.Delete(w, j, j+1)
						dropped++
					} else {
						w = w[:10]
					}
				}
				for j := range w {
					w[j].Rank = int32(j + 1)
				}
				if !slices.Equal(got[q], w) {
					t.Fatalf("query %q:\n join   %v\n search %v", q, got[q], w)
				}
			}
			if self && dropped < len(words)*9/10 {
				t.Fatalf("--self dropped %d self-matches of %d queries: the comparison shows little", dropped, len(words))
			}
		})
	}
}

// TestJoinCLIUsage: missing required flags and conflicting ones are usage
// errors (exit 2) that name the flag, and write nothing.
func TestJoinCLIUsage(t *testing.T) {
	wh := gloveWarehouse(t)
	out := filepath.Join(t.TempDir(), "out")
	base := []string{"--warehouse", wh, "join", "words", "--queries-table", gloveSample, "--query-key", "word", "--query-vector", "embedding"}
	for _, c := range []struct {
		args []string
		text string
	}{
		{base, "--output"},
		{append(slices.Clone(base), "--output", out, "--max-distance", "0.1", "--min-similarity", "0.9"), "not both"},
		{append(slices.Clone(base), "--output", out, "--recall", "0.9", "--nprobe", "4"), "--recall"},
		{append(slices.Clone(base), "--output", out, "--query-key", "rank", "--self"), "--self"},
		{append(slices.Clone(base), "--output", out, "--where", "rank >"), "rank"},
		{append(slices.Clone(base), "--output", out, "-k", "0"), "-k"},
	} {
		_, errs, code := runSplit(t, c.args...)
		if code != exitUsage || !strings.Contains(errs, c.text) {
			t.Errorf("%q: exit %d (%s), want %d naming %s", c.args[len(base)-1:], code, errs, exitUsage, c.text)
		}
	}
	if _, err := os.Stat(out); err == nil {
		if v := visibleFiles(t, out); len(v) > 0 {
			t.Fatalf("files written: %v", v)
		}
	}
}

// TestJoinIcebergCLI joins an index with an Iceberg table as the query
// table (read as index create reads it): every row gets k neighbours,
// none of them itself.
func TestJoinIcebergCLI(t *testing.T) {
	l := icetest.NewLake(t, "lake", "sqlite", "local")
	l.Create("items", icetest.DocsSchema(), nil)
	l.AppendRows(icetest.IDs(0, 300))
	wh := t.TempDir()
	if out, code := runCLI(t, "--warehouse", wh, "index", "create", "docs", "--source", l.Ref(), "--vector-field", "embedding", "--key-fields", "id", "--nlist", "4"); code != 0 {
		t.Fatalf("index create: exit %d\n%s", code, out)
	}
	dest := filepath.Join(t.TempDir(), "knn")
	out, code := runCLI(t, "--warehouse", wh, "join", "docs", "--queries-table", l.Ref(), "--query-key", "id", "--query-vector", "embedding",
		"-k", "3", "--self", "--nprobe", "4", "--output", dest, "-q")
	if code != 0 || !strings.Contains(out, "queries  300") || !strings.Contains(out, "rows     900 in 1 file(s)") {
		t.Fatalf("join: exit %d\n%s", code, out)
	}
	rows, err := parquet.ReadFile[struct {
		Query int64 `parquet:"query_id"`
		ID    int64 `parquet:"id"`
	}](filepath.Join(dest, "part-000000-00000.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, r := range rows {
		if r.Query == r.ID {
			t.Fatalf("query %d has itself as a neighbour", r.Query)
		}
		seen[r.Query]++
	}
	if len(seen) != 300 {
		t.Fatalf("%d queries in the output, want 300", len(seen))
	}
}
