package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/fvecs"
	"github.com/parqdb/parqdb/internal/ivecs"
	"github.com/parqdb/parqdb/internal/version"
	"github.com/parqdb/parqdb/query"
)

const gloveSample = "../../examples/glove/glove-10k.parquet"

// runSplit runs parqdb with args and returns standard output, standard
// error and the exit code.
func runSplit(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	root, _ := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return out.String(), errb.String(), exitOK
	}
	return out.String(), errb.String() + err.Error(), exitCode(err)
}

// gloveWarehouse builds the GloVe sample (cosine, lvq8, nlist 50) with
// the CLI into a fresh warehouse and returns its folder.
func gloveWarehouse(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "wh")
	_, errs, code := runSplit(t, "--warehouse", dir, "index", "create", "words", "--source", gloveSample,
		"--vector-field", "embedding", "--key-fields", "word", "--metric", "cosine", "--nlist", "50")
	if code != exitOK {
		t.Fatalf("index create: exit %d: %s", code, errs)
	}
	return dir
}

// writeFvecs writes vectors in the .fvecs format.
func writeFvecs(t *testing.T, path string, vs [][]float32) {
	t.Helper()
	var b []byte
	for _, v := range vs {
		b = fvecs.Append(b, v)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// gloveQueries returns a few query vectors of dimension 50.
func gloveQueries(n int) [][]float32 {
	qs := make([][]float32, n)
	for i := range qs {
		qs[i] = make([]float32, 50)
		for j := range qs[i] {
			qs[i][j] = float32(math.Sin(float64(i*50+j+1))) * 0.5
		}
	}
	return qs
}

func TestSearchNearKeyTable(t *testing.T) {
	wh := gloveWarehouse(t)
	out, errs, code := runSplit(t, "--warehouse", wh, "search", "words", "--near-key", "king", "-k", "4", "--columns", "word,rank")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || strings.Fields(lines[0])[0] != "word" || strings.Fields(lines[0])[2] != "_distance" {
		t.Fatalf("table:\n%s", out)
	}
	if f := strings.Fields(lines[1]); f[0] != "king" || f[1] != "692" {
		t.Fatalf("first row %q, want king 692", lines[1])
	}
}

func TestSearchBatchFormats(t *testing.T) {
	wh := gloveWarehouse(t)
	dir := t.TempDir()
	qf := filepath.Join(dir, "q.fvecs")
	writeFvecs(t, qf, gloveQueries(3))
	base := []string{"--warehouse", wh, "search", "words", "--queries", qf, "-k", "3", "--nprobe", "50", "--refine", "2", "--columns", "word,rank"}

	t.Run("json lines in input order", func(t *testing.T) {
		out, errs, code := runSplit(t, append(base, "--format", "json", "--stats")...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 {
			t.Fatalf("%d lines:\n%s", len(lines), out)
		}
		for i, l := range lines {
			var v struct {
				Query   int              `json:"query"`
				Results []map[string]any `json:"results"`
			}
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatal(err)
			}
			if v.Query != i || len(v.Results) != 3 {
				t.Fatalf("line %d: %s", i, l)
			}
			for _, r := range v.Results {
				if len(r) != 3 || r["word"] == nil || r["rank"] == nil || r["_distance"] == nil {
					t.Fatalf("line %d: result %v: want word, rank, _distance only", i, r)
				}
			}
			if !strings.HasPrefix(l, `{"query":`) || !strings.Contains(l, `{"word":`) {
				t.Fatalf("line %d: column order: %s", i, l)
			}
		}
		var st map[string]any
		if err := json.Unmarshal([]byte(strings.TrimSpace(errs)), &st); err != nil {
			t.Fatalf("--stats is not one JSON line: %q", errs)
		}
		for _, k := range []string{"queries", "seconds", "qps", "candidates", "bytes_read", "requests"} {
			if _, ok := st[k]; !ok {
				t.Fatalf("--stats lacks %q: %s", k, errs)
			}
		}
		if st["queries"].(float64) != 3 || st["candidates"].(float64) != 3*10000 {
			t.Fatalf("--stats: %s (all lists probed: every row is a candidate)", errs)
		}
	})
	t.Run("csv", func(t *testing.T) {
		out, errs, code := runSplit(t, append(base, "--format", "csv")...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if lines[0] != "query,word,rank,_distance" || len(lines) != 10 {
			t.Fatalf("csv:\n%s", out)
		}
	})
	t.Run("parquet", func(t *testing.T) {
		path := filepath.Join(dir, "out.parquet")
		if _, errs, code := runSplit(t, append(base, "--format", "parquet", "--output", path)...); code != exitOK {
			t.Fatalf("exit %d: %s", code, errs)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		st, _ := f.Stat()
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, fl := range pf.Schema().Fields() {
			names = append(names, fl.Name())
		}
		if strings.Join(names, ",") != "query,word,rank,_distance" || pf.NumRows() != 9 {
			t.Fatalf("parquet columns %v, %d rows", names, pf.NumRows())
		}
		rows, err := parquet.Read[struct {
			Query    int64   `parquet:"query"`
			Word     string  `parquet:"word"`
			Distance float32 `parquet:"_distance"`
		}](f, st.Size())
		if err != nil {
			t.Fatal(err)
		}
		if rows[0].Query != 0 || rows[8].Query != 2 || rows[0].Word == "" || rows[1].Distance < rows[0].Distance {
			t.Fatalf("rows %+v", rows)
		}
	})
}

func TestSearchErrors(t *testing.T) {
	wh := gloveWarehouse(t)
	for name, tc := range map[string]struct {
		args []string
		code int
		msg  string
	}{
		"no query":       {[]string{"search", "words"}, exitUsage, "exactly one of"},
		"two queries":    {[]string{"search", "words", "--near-key", "a", "--vector", "[1]"}, exitUsage, "exactly one of"},
		"bad format":     {[]string{"search", "words", "--near-key", "king", "--format", "xml"}, exitUsage, "--format"},
		"bad vector":     {[]string{"search", "words", "--vector", "[1, x]"}, exitUsage, "JSON array"},
		"wrong dim":      {[]string{"search", "words", "--vector", "[1, 2]"}, exitUsage, "dimension 50"},
		"missing key":    {[]string{"search", "words", "--near-key", "no-such-word-zz"}, exitProblem, "key not found"},
		"old snapshot":   {[]string{"search", "words", "--near-key", "king", "--snapshot", "999"}, exitProblem, "not retained"},
		"unknown column": {[]string{"search", "words", "--near-key", "king", "--columns", "nope"}, exitUsage, `column "nope" is not in the source of index "words" (columns: word, rank, embedding)`},
		"bench column":   {[]string{"bench", "words", "--queries", gloveSample, "--query-column", "embedding", "--join", "--columns", "wrod"}, exitUsage, `column "wrod" is not in the source of index "words" (columns: word,`},
		"unknown flag":   {[]string{"search", "words", "--near-key", "king", "--nprob", "3"}, exitUsage, "unknown flag: --nprob; did you mean --nprobe?"},
		"unknown cmd":    {[]string{"serch", "words"}, exitUsage, "Did you mean this?"},
	} {
		t.Run(name, func(t *testing.T) {
			_, errs, code := runSplit(t, append([]string{"--warehouse", wh}, tc.args...)...)
			if code != tc.code || !strings.Contains(errs, tc.msg) {
				t.Fatalf("exit %d, %q; want exit %d mentioning %q", code, errs, tc.code, tc.msg)
			}
		})
	}
}

func TestReadQueriesFormats(t *testing.T) {
	dir := t.TempDir()
	qs := gloveQueries(2)
	fv := filepath.Join(dir, "q.fvecs")
	writeFvecs(t, fv, qs)
	// .npy, float32, shape (2, 50)
	hdr := "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 50), }"
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	npy := append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)), byte(len(hdr)>>8))
	npy = append(npy, hdr...)
	for _, v := range qs {
		for _, x := range v {
			npy = binary.LittleEndian.AppendUint32(npy, math.Float32bits(x))
		}
	}
	np := filepath.Join(dir, "q.npy")
	os.WriteFile(np, npy, 0o644)
	// Parquet with a list<float> column.
	type row struct {
		V []float32 `parquet:"v,list"`
	}
	pq := filepath.Join(dir, "q.parquet")
	if err := parquet.WriteFile(pq, []row{{qs[0]}, {qs[1]}}); err != nil {
		t.Fatal(err)
	}
	// JSON Lines, one array per line, a blank line skipped.
	var jl []byte
	for _, v := range qs {
		b, _ := json.Marshal(v)
		jl = append(append(jl, b...), '\n', '\n')
	}
	jp := filepath.Join(dir, "q.jsonl")
	os.WriteFile(jp, jl, 0o644)
	for _, tc := range []struct{ path, col string }{{fv, ""}, {np, ""}, {pq, "v"}, {jp, ""}} {
		got, err := readQueries(tc.path, tc.col)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if len(got) != 2 || len(got[1]) != 50 || got[1][7] != qs[1][7] {
			t.Fatalf("%s: read %d vectors", tc.path, len(got))
		}
	}
	if _, err := readQueries(pq, ""); err == nil {
		t.Fatal("Parquet queries without --query-column: no error")
	}
	for name, tc := range map[string]struct {
		file, content, col string
		usage              bool
		msg                string
	}{
		// base.jsonl used to say "a Parquet query file needs --query-column".
		"unknown ext":   {"base.txt", "[1]\n", "", true, `unknown extension ".txt"; give one of .fvecs, .npy (2-D float32/float64), .jsonl`},
		"no ext":        {"base", "[1]\n", "", true, "has no extension"},
		"parquet w/o":   {"q2.parquet", "x", "", true, "needs --query-column"},
		"jsonl column":  {"c.jsonl", "[1]\n", "v", true, "--query-column goes with a Parquet file"},
		"jsonl syntax":  {"s.jsonl", "[1, 2]\n[1, x]\n", "", false, "line 2 (query 1): want a JSON array"},
		"jsonl dim":     {"d.jsonl", "[1, 2]\n\n[3]\n", "", false, "line 3 (query 1): 1 values, the first query has 2"},
		"jsonl empty":   {"e.jsonl", "[]\n", "", false, "line 1 (query 0): the array is empty"},
		"jsonl nothing": {"n.jsonl", "\n", "", false, "no vectors"},
		"jsonl big":     {"b.jsonl", "[1e39]\n", "", false, "overflows float32"},
	} {
		p := filepath.Join(dir, tc.file)
		os.WriteFile(p, []byte(tc.content), 0o644)
		_, err := readQueries(p, tc.col)
		if err == nil || !strings.Contains(err.Error(), tc.msg) || (exitCode(err) == exitUsage) != tc.usage {
			t.Errorf("%s: %v (exit %d); want %q", name, err, exitCode(err), tc.msg)
		}
	}
	os.WriteFile(filepath.Join(dir, "bad.fvecs"), []byte{50, 0, 0, 0, 1, 2}, 0o644)
	if _, err := readQueries(filepath.Join(dir, "bad.fvecs"), ""); err == nil {
		t.Fatal("truncated .fvecs: no error")
	}
}

// FuzzQueryFiles feeds arbitrary bytes to the query-file readers and the
// --vector parser: they must fail cleanly or return well-formed vectors.
func FuzzQueryFiles(f *testing.F) {
	var fv []byte
	fv = binary.LittleEndian.AppendUint32(fv, 2)
	fv = binary.LittleEndian.AppendUint32(fv, math.Float32bits(1.5))
	fv = binary.LittleEndian.AppendUint32(fv, math.Float32bits(-2))
	f.Add(fv, "[1, 2.5, -3e-2]")
	f.Add([]byte("\x93NUMPY\x01\x00\x46\x00{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }          \n\x00\x00\x80\x3f\x00\x00\x00\x40"), "[]")
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f}, "[1e39]")
	f.Fuzz(func(t *testing.T, data []byte, vec string) {
		dir := t.TempDir()
		for _, ext := range []string{".fvecs", ".npy", ".jsonl", ".ivecs"} {
			p := filepath.Join(dir, "q"+ext)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if ext == ".ivecs" {
				rows, err := ivecs.Read(p)
				if err == nil && len(rows) == 0 {
					t.Fatal("readIvecs: no rows and no error")
				}
				continue
			}
			qs, err := readQueries(p, "")
			if err != nil {
				continue
			}
			if len(qs) == 0 {
				t.Fatalf("%s: no vectors and no error", ext)
			}
			for _, q := range qs {
				if len(q) == 0 {
					t.Fatalf("%s: empty vector", ext)
				}
			}
		}
		if v, err := parseVector(vec); err == nil {
			if len(v) == 0 {
				t.Fatal("parseVector: empty vector accepted")
			}
			for _, x := range v {
				if math.IsInf(float64(x), 0) {
					t.Fatal("parseVector: overflow accepted")
				}
			}
		}
	})
}

// TestVersion: parqdb --version and parqdb version print the build's
// version (there was no --version), and result Parquet files record it in
// created_by (they said "parqdb version (build )").
func TestVersion(t *testing.T) {
	old := version.Version
	version.Version = "v7.7.7-test"
	defer func() { version.Version = old }()
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, errs, code := runSplit(t, args...)
		if code != exitOK || out != "parqdb v7.7.7-test\n" {
			t.Fatalf("%v: exit %d, %q %q", args, code, out, errs)
		}
	}
	wh := gloveWarehouse(t)
	path := filepath.Join(t.TempDir(), "r.parquet")
	if _, errs, code := runSplit(t, "--warehouse", wh, "search", "words", "--near-key", "king", "--format", "parquet", "-o", path); code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	if got := pf.Metadata().CreatedBy; got != "parqdb version v7.7.7-test (build search-results)" {
		t.Fatalf("created_by %q", got)
	}
	// The index tables the build wrote record it too.
	var found bool
	filepath.WalkDir(wh, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") || found {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		ipf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return err
		}
		if got := ipf.Metadata().CreatedBy; got != "parqdb version v7.7.7-test (build profile-1)" {
			t.Errorf("%s: created_by %q", p, got)
		}
		found = true
		return nil
	})
	if !found {
		t.Fatal("no index Parquet file found")
	}
}

// TestQueryNumbering: queries are numbered from 0 everywhere — the output's
// query field and the errors — also past the first batch of
// query.MaxBatch vectors.
func TestQueryNumbering(t *testing.T) {
	wh := gloveWarehouse(t)
	qs := gloveQueries(query.MaxBatch + 10)
	qs[query.MaxBatch+3] = qs[query.MaxBatch+3][:7]
	qf := filepath.Join(t.TempDir(), "q.fvecs")
	writeFvecs(t, qf, qs)
	_, errs, code := runSplit(t, "--warehouse", wh, "search", "words", "--queries", qf)
	want := fmt.Sprintf("query %d: ", query.MaxBatch+3)
	if code != exitUsage || !strings.Contains(errs, want) || !strings.Contains(errs, "7 values") {
		t.Fatalf("exit %d, %q; want exit 2 naming %q", code, errs, want)
	}
	qs[query.MaxBatch+3] = gloveQueries(1)[0]
	writeFvecs(t, qf, qs)
	out, errs, code := runSplit(t, "--warehouse", wh, "search", "words", "--queries", qf, "-k", "1", "--format", "json", "--columns", "word")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(qs) {
		t.Fatalf("%d lines for %d queries", len(lines), len(qs))
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, fmt.Sprintf(`{"query":%d,`, i)) {
			t.Fatalf("line %d: %s", i, l)
		}
	}
}

// TestNearKeyForms: --near-key takes one value verbatim (the GloVe word ","
// used to be split into two empty values), and a composite key has the
// unambiguous forms --key COL=VALUE (repeated) and --near-key-json.
func TestNearKeyForms(t *testing.T) {
	wh := gloveWarehouse(t)
	_, errs, code := runSplit(t, "--warehouse", wh, "index", "create", "pairs", "--source", gloveSample,
		"--vector-field", "embedding", "--key-fields", "word,rank", "--nlist", "20", "-q")
	if code != exitOK {
		t.Fatalf("create: exit %d: %s", code, errs)
	}
	first := func(args ...string) (string, string, int) {
		out, errs, code := runSplit(t, append([]string{"--warehouse", wh, "search"}, append(args, "-k", "2", "--columns", "word,rank", "--format", "json")...)...)
		var v struct {
			Results []struct {
				Word string `json:"word"`
				Rank int    `json:"rank"`
			} `json:"results"`
		}
		if code != exitOK || json.Unmarshal([]byte(out), &v) != nil || len(v.Results) == 0 {
			return "", errs + out, code
		}
		return fmt.Sprintf("%s/%d", v.Results[0].Word, v.Results[0].Rank), errs, code
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"words", "--near-key", ","}, ",/"},
		{[]string{"words", "--key", "word=,"}, ",/"},
		{[]string{"words", "--near-key-json", `","`}, ",/"},
		{[]string{"words", "--near-key-json", `[","]`}, ",/"},
		{[]string{"words", "--near-key", "king"}, "king/692"},
		{[]string{"pairs", "--key", "rank=692", "--key", "word=king"}, "king/692"},
		{[]string{"pairs", "--near-key-json", `["king", 692]`}, "king/692"},
	} {
		got, errs, code := first(tc.args...)
		if code != exitOK || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%v: exit %d, first row %q (%s); want %q…", tc.args, code, got, errs, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"pairs", "--near-key", "king"}, `index "pairs" has a composite key (word, rank): give --key word=…`},
		{[]string{"pairs", "--key", "word=king"}, `key field "rank" is missing`},
		{[]string{"pairs", "--key", "word=king", "--key", "word=queen", "--key", "rank=1"}, `key field "word" is given twice`},
		{[]string{"pairs", "--key", "wrd=king"}, `"wrd" is not a key field of index "pairs" (key fields: word, rank)`},
		{[]string{"pairs", "--key", "king"}, "want COL=VALUE"},
		{[]string{"pairs", "--near-key-json", `["king"]`}, "the key has 2 field(s)"},
		{[]string{"pairs", "--near-key-json", `["king", 692`}, "--near-key-json: key:"},
		{[]string{"pairs", "--near-key-json", `["king", 692]`, "--key", "word=king"}, "exactly one of"},
	} {
		_, errs, code := runSplit(t, append([]string{"--warehouse", wh, "search"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: exit %d, %q; want exit 2 with %q", tc.args, code, errs, tc.msg)
		}
	}
}
