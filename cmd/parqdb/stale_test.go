package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// gloveRow is a row of the GloVe sample's schema.
type gloveRow struct {
	Word      string    `parquet:"word"`
	Rank      int32     `parquet:"rank"`
	Embedding []float32 `parquet:"embedding,list"`
}

// gloveFolderIndex builds index "words" over a folder holding the GloVe
// sample as part-0.parquet, with the working folder the test's temporary
// folder; it returns that folder, the source folder, the warehouse flag
// and the sample's bytes.
func gloveFolderIndex(t *testing.T) (dir, src, wh string, sample []byte) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	t.Chdir(dir) // the table shows the source relative to the working folder
	src = filepath.Join(dir, "vectors")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	sample, err = os.ReadFile(filepath.Join(root, "examples/glove/glove-10k.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "part-0.parquet"), sample, 0o644); err != nil {
		t.Fatal(err)
	}
	wh = "--warehouse=" + filepath.Join(dir, "warehouse")
	if _, errs, code := runSplit(t, wh, "index", "create", "words", "--source", src,
		"--vector-field", "embedding", "--key-fields", "word", "--metric", "cosine", "--nlist", "50"); code != exitOK {
		t.Fatalf("index create: exit %d: %s", code, errs)
	}
	return dir, src, wh, sample
}

// appendWord adds part-1.parquet with the one word "zyzzyva" to src and
// returns its embedding.
func appendWord(t *testing.T, src string) []float32 {
	t.Helper()
	emb := make([]float32, 50)
	emb[0] = 1
	f, err := os.Create(filepath.Join(src, "part-1.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if err := parquet.Write(f, []gloveRow{{Word: "zyzzyva", Rank: 10001, Embedding: emb}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return emb
}

// TestStaleFolderSourceCLI: a file appended to a folder source leaves
// search answering with one warning on stderr and index list/describe
// showing stale true in every format (false before); a key only the new
// file has fails naming it; a recorded file rewritten or removed fails
// with stale_index's message naming it and the fix. The table of index
// list fits 80 columns; describe lists the source's columns and types.
func TestStaleFolderSourceCLI(t *testing.T) {
	dir, src, wh, sample := gloveFolderIndex(t)
	stale := func(want string) {
		t.Helper()
		out, errs, code := runSplit(t, wh, "index", "list")
		if code != exitOK {
			t.Fatalf("index list: exit %d: %s", code, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		for _, l := range lines {
			if n := len([]rune(l)); n > 80 {
				t.Errorf("index list line of %d columns: %q", n, l)
			}
		}
		if f := strings.Fields(lines[1]); len(f) != 8 || f[6] != want || f[7] != "vectors/" {
			t.Errorf("index list row %q, want stale %s and source vectors/", lines[1], want)
		}
		out, _, _ = runSplit(t, wh, "index", "list", "--format", "json")
		var js []map[string]any
		if err := json.Unmarshal([]byte(out), &js); err != nil || len(js) != 1 || js[0]["stale"] != (want == "true") {
			t.Errorf("index list json: %v %s", err, out)
		}
		out, _, _ = runSplit(t, wh, "index", "list", "--format", "csv")
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(recs) != 2 || recs[0][6] != "stale" || recs[1][6] != want {
			t.Errorf("index list csv: %v %q", err, out)
		}
		out, _, _ = runSplit(t, wh, "index", "describe", "words")
		if !strings.Contains(out, "stale ") || !strings.Contains(out, " "+want+"\n") {
			t.Errorf("index describe does not say stale %s:\n%s", want, out)
		}
		out, _, _ = runSplit(t, wh, "index", "describe", "words", "--format", "json")
		var d map[string]any
		if err := json.Unmarshal([]byte(out), &d); err != nil || d["stale"] != (want == "true") {
			t.Errorf("index describe json: %v %s", err, out)
		}
	}
	stale("false")

	// describe: the source's columns and types.
	out, _, _ := runSplit(t, wh, "index", "describe", "words")
	for _, want := range []string{"source-columns", "word string", "rank int32", "embedding list<float>"} {
		if !strings.Contains(out, want) {
			t.Errorf("index describe lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = runSplit(t, wh, "index", "describe", "words", "--format", "json")
	if !strings.Contains(out, `{"name": "embedding", "type": "list<float>"}`) && !strings.Contains(out, `"type": "list<float>"`) {
		t.Errorf("index describe json lacks the source columns:\n%s", out)
	}

	emb := appendWord(t, src)
	out, errs, code := runSplit(t, wh, "search", "words", "--near-key", "king", "-k", "3", "--columns", "word")
	if code != exitOK || !strings.Contains(out, "queen") {
		t.Fatalf("search after an append: exit %d: %s %s", code, out, errs)
	}
	if n := strings.Count(errs, "warning:"); n != 1 || !strings.Contains(errs, `"part-1.parquet"`) || !strings.Contains(errs, "parqdb index refresh words") {
		t.Fatalf("search after an append: %d warnings, want one naming the file and the fix: %q", n, errs)
	}
	stale("true")
	_, errs, code = runSplit(t, wh, "search", "words", "--near-key", "zyzzyva", "-k", "3")
	if code != 1 || !strings.Contains(errs, "part-1.parquet") || !strings.Contains(errs, "snapshot does not index") {
		t.Fatalf("key only in the appended file: exit %d: %s", code, errs)
	}
	queries := filepath.Join(dir, "q.fvecs")
	writeFvecs(t, queries, [][]float32{emb, emb})
	if _, errs, code = runSplit(t, wh, "bench", "words", "--queries", queries,
		"--nprobe", "2", "--cold-queries", "1", "-k", "1"); code != exitOK || strings.Count(errs, "warning: index") != 1 {
		t.Fatalf("bench on a stale index: exit %d: %s", code, errs)
	}

	// Rewrite the recorded file in place, then remove it.
	rewrite := append(sample[:len(sample):len(sample)], 0)
	if err := os.WriteFile(filepath.Join(src, "part-0.parquet"), rewrite, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(src, "part-0.parquet"), later, later)
	for _, what := range []string{"rewritten", "removed"} {
		if what == "removed" {
			os.Remove(filepath.Join(src, "part-0.parquet"))
		}
		_, errs, code = runSplit(t, wh, "search", "words", "--near-key", "king", "-k", "3")
		if code != 1 || !strings.Contains(errs, `"part-0.parquet" was `+what) || !strings.Contains(errs, "parqdb index refresh words") ||
			strings.Contains(errs, "decod") {
			t.Fatalf("search after part-0 was %s: exit %d: %s", what, code, errs)
		}
		stale("true")
	}
}
