package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/server/sqlengine"
)

// cli runs the CLI as a separate process (this test binary, asCLI; in the
// DuckDB build a binary built into a scratch folder), as a user runs it,
// and returns its standard output, standard error and exit code.
func cli(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	testenv.SkipShort(t, "tests that run the CLI as a child process")
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), asCLI+"=1", "PARQDB_WAREHOUSE=", "PARQDB_CATALOG=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errb.String(), 0
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	}
	t.Fatalf("parqdb %v: %v", args, err)
	return "", "", -1
}

// TestFailedCreateLeavesNothing: an index create that fails before it
// commits (a typo in a field name, a missing source) into a warehouse that
// does not exist yet leaves no warehouse behind: no folder, no catalog.db.
// Into an existing empty folder, the folder stays exactly as it was.
func TestFailedCreateLeavesNothing(t *testing.T) {
	bin := cliBinary(t)
	src, err := filepath.Abs(gloveSample)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"vector field typo", []string{"--source", src, "--vector-field", "embeding", "--key-fields", "word"}},
		{"key field typo", []string{"--source", src, "--vector-field", "embedding", "--key-fields", "wrod"}},
		{"missing source", []string{"--source", filepath.Join(dir, "nope.parquet"), "--vector-field", "embedding", "--key-fields", "word"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			fresh := filepath.Join(base, "fresh", "wh")
			_, errs, code := cli(t, bin, append([]string{"--warehouse", fresh, "index", "create", "w"}, tc.args...)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1: %s", code, errs)
			}
			// Not even the parent folder it made for it.
			if _, err := os.Lstat(filepath.Dir(fresh)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the failed create left %s behind: %v", filepath.Dir(fresh), tree(t, filepath.Dir(fresh)))
			}
			// An existing empty folder stays, empty.
			empty := filepath.Join(base, "empty")
			if err := os.MkdirAll(empty, 0o755); err != nil {
				t.Fatal(err)
			}
			if _, errs, code := cli(t, bin, append([]string{"--warehouse", empty, "index", "create", "w"}, tc.args...)...); code != 1 {
				t.Fatalf("exit %d, want 1: %s", code, errs)
			}
			if got := tree(t, empty); len(got) != 1 {
				t.Errorf("the failed create changed the empty folder: %v", got)
			}
			// An explicit SQLite catalog file that did not exist goes too.
			db := filepath.Join(base, "cat", "c.db")
			if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
				t.Fatal(err)
			}
			wh := filepath.Join(base, "wh2")
			if _, errs, code := cli(t, bin, append([]string{"--warehouse", wh, "--catalog", "sqlite:" + db, "index", "create", "w"}, tc.args...)...); code != 1 {
				t.Fatalf("exit %d, want 1: %s", code, errs)
			}
			for _, p := range []string{db, wh} {
				if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the failed create left %s behind", p)
				}
			}
		})
	}
	// A failed create next to a committed index keeps everything.
	wh := filepath.Join(dir, "kept")
	if _, errs, code := cli(t, bin, "--warehouse", wh, "index", "create", "words", "--source", src,
		"--vector-field", "embedding", "--key-fields", "word", "--nlist", "20", "-q"); code != 0 {
		t.Fatalf("create: exit %d: %s", code, errs)
	}
	before := treeStat(t, wh)
	if _, errs, code := cli(t, bin, "--warehouse", wh, "index", "create", "w2", "--source", src,
		"--vector-field", "embeding", "--key-fields", "word"); code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, errs)
	}
	if _, errs, code := cli(t, bin, "--warehouse", wh, "search", "words", "--near-key", "king", "-k", "1"); code != 0 {
		t.Fatalf("search after the failed create: exit %d: %s", code, errs)
	}
	if after := treeStat(t, wh); len(after) != len(before) {
		t.Errorf("the failed create changed the warehouse:\nbefore %v\nafter  %v", before, after)
	}
}

// TestUnknownIndexSuggestsNearest: every command that takes an index name
// suggests the nearest name the catalog holds, and none when no name is
// near.
func TestUnknownIndexSuggestsNearest(t *testing.T) {
	wh := gloveWarehouse(t)
	queries := filepath.Join(t.TempDir(), "q.fvecs")
	writeFvecs(t, queries, [][]float32{make([]float32, 50)})
	for _, args := range [][]string{
		{"search", "wrods", "--near-key", "king"},
		{"search", "Words", "--vector", "[" + strings.Repeat("0.1,", 49) + "0.1]"},
		{"bench", "wrods", "--queries", queries, "--nprobe", "1"},
		{"index", "describe", "word"},
		{"index", "refresh", "wordz"},
		{"index", "optimize", "wrods"},
		{"index", "history", "wrods"},
		{"index", "expire", "wrods", "--retain-last", "1"},
		{"index", "verify", "wrods"},
		{"index", "drop", "wrods"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			checkUserError(t, append([]string{"--warehouse", wh}, args...), `did you mean "words"?`)
		})
	}
	out, code := runCLI(t, "--warehouse", wh, "index", "describe", "zebra")
	if code == exitOK || !strings.Contains(out, `"zebra"`) || strings.Contains(out, "did you mean") {
		t.Errorf("a far name: exit %d: %s", code, out)
	}
}

// TestGCCountsAfterExpire: after expire, gc --dry-run within the grace
// period counts the expired snapshot's files it keeps, and a gc past the
// grace period deletes exactly that many.
func TestGCCountsAfterExpire(t *testing.T) {
	wh := gloveWarehouse(t)
	for _, args := range [][]string{
		{"index", "optimize", "words", "--force", "-q"},
		{"index", "expire", "words", "--retain-last", "1"},
	} {
		if out, code := runCLI(t, append([]string{"--warehouse", wh}, args...)...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, out)
		}
	}
	line := regexp.MustCompile(`would delete (\d+) orphan file\(s\).*; (\d+) in use by current snapshots; kept within the grace period: (\d+) file\(s\) of expired snapshots and older metadata, (\d+) unreferenced file\(s\), (\d+) unfinished write\(s\)`)
	out, code := runCLI(t, "--warehouse", wh, "gc", "--dry-run")
	m := line.FindStringSubmatch(out)
	if code != exitOK || m == nil {
		t.Fatalf("gc --dry-run: exit %d:\n%s", code, out)
	}
	kept, _ := strconv.Atoi(m[3])
	if m[1] != "0" || kept == 0 || m[4] != "0" {
		t.Fatalf("gc --dry-run within the grace period: %s; want 0 orphans and the expired snapshot's files kept", m[0])
	}
	out, code = runCLI(t, "--warehouse", wh, "gc", "--grace", "0s")
	del := regexp.MustCompile(`deleted (\d+) orphan file\(s\).*; (\d+) in use by current snapshots; kept within the grace period: 0 file\(s\)`).FindStringSubmatch(out)
	if code != exitOK || del == nil || del[1] != m[3] || del[2] != m[2] {
		t.Fatalf("gc --grace 0s after the dry run said %q:\n%s\nwant %s deleted and %s in use", m[0], out, m[3], m[2])
	}
	if out, code := runCLI(t, "--warehouse", wh, "index", "verify", "words"); code != exitOK {
		t.Fatalf("verify after gc: exit %d: %s", code, out)
	}
}

// badArticle matches "a" before a word that starts with a vowel sound the
// way English spells it ("a incremental"); words that start with a
// consonant sound ("a one", "a user", "a unique") are left alone.
var badArticle = regexp.MustCompile(`\b[Aa] ([aeio][a-z]*|u(n[^i][a-z]*|n))\b`)

// okAfterA are words after "a" that badArticle would match but that are
// code (a variable a) or sound like a consonant.
var okAfterA = map[string]bool{"one": true, "once": true, "and": true, "into": true, "arrow": true}

func articleSlips(text string) []string {
	var out []string
	for _, m := range badArticle.FindAllStringSubmatch(text, -1) {
		if !okAfterA[m[1]] {
			out = append(out, m[0])
		}
	}
	return out
}

// TestNoArticleSlips: no message or help text of the CLI says "a" before a
// vowel ("would do a incremental refresh").
func TestNoArticleSlips(t *testing.T) {
	for _, action := range []string{"none", "incremental", "rebuild", "reassign"} {
		for _, dry := range []bool{false, true} {
			if v := refreshVerb(action, dry); v == "" || len(articleSlips(v)) > 0 {
				t.Errorf("refresh %s (dry run %v) says %q", action, dry, v)
			}
		}
	}
	root, _ := newRootCmd()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		text := c.Short + "\n" + c.Long + "\n" + c.Example + "\n" + c.Flags().FlagUsages()
		if s := articleSlips(text); len(s) > 0 {
			t.Errorf("%s --help: %v", c.CommandPath(), s)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, f := range append([]string{"../../README.md"}, mustGlob(t, "../../docs/*.md")...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if s := articleSlips(string(b)); len(s) > 0 {
			t.Errorf("%s: %v", f, s)
		}
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) == 0 {
		t.Fatalf("%s: %v %v", pattern, m, err)
	}
	return m
}

// TestSQLHelpCountsFunctions: sql --help says how many search functions
// take the named arguments, and lists that many.
func TestSQLHelpCountsFunctions(t *testing.T) {
	root, _ := newRootCmd()
	c, _, err := root.Find([]string{"sql"})
	if err != nil {
		t.Fatal(err)
	}
	listed := len(regexp.MustCompile(`(?m)^  ivf_\w+\(`).FindAllString(c.Long, -1))
	m := regexp.MustCompile(`for each of the (\w+) search functions`).FindStringSubmatch(c.Long)
	words := map[string]int{"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
	if m == nil || words[m[1]] != listed {
		t.Errorf("sql --help lists %d search functions and says %v:\n%s", listed, m, c.Long)
	}
}

// TestStatsDocNamesEveryField: the --stats item of docs/search.md names
// every member of the JSON line search prints (searchStats), in one piece
// (a member may be named by its prefix, `postings_*`).
func TestStatsDocNamesEveryField(t *testing.T) {
	b, err := os.ReadFile("../../docs/search.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "\n- `--stats` prints")
	if start < 0 {
		t.Fatal("docs/search.md has no --stats item")
	}
	item := doc[start+1:]
	if end := strings.Index(item, "\n- "); end >= 0 {
		item = item[:end]
	}
	for _, name := range jsonNames(reflect.TypeOf(searchStats{})) {
		prefix, _, _ := strings.Cut(name, "_")
		if !strings.Contains(item, "`"+name+"`") && !strings.Contains(item, "`"+prefix+"_*`") {
			t.Errorf("the --stats item of docs/search.md does not name %q:\n%s", name, item)
		}
	}
}

// jsonNames lists the JSON member names of struct type t, those of
// embedded structs included.
func jsonNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonNames(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// TestBuildNamesAgree: each build has one binary name, the same in the
// Makefile, the docs and the errors of a binary without SQL: make build
// (and make demo) write bin/parqdb, make build-sql bin/parqdb-sql.
func TestBuildNamesAgree(t *testing.T) {
	recipe := func(target string) string {
		cmd := exec.Command("make", "-n", "-s", target)
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "MAKEFLAGS=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make -n %s: %v\n%s", target, err, out)
		}
		return string(out)
	}
	goBuild := regexp.MustCompile(`(?m)^go build .*$`)
	for _, tc := range []struct {
		target, out string
		sql         bool
	}{
		{"build", "bin/parqdb", false},
		{"demo", "bin/parqdb", false},
		{"build-sql", "bin/parqdb-sql", true},
	} {
		r := recipe(tc.target)
		builds := goBuild.FindAllString(r, -1)
		if len(builds) != 1 || !strings.Contains(builds[0], " -o "+tc.out+" ") ||
			strings.Contains(builds[0], "duckdb") != tc.sql {
			t.Errorf("make %s builds %q, want one go build -o %s (DuckDB %v):\n%s", tc.target, builds, tc.out, tc.sql, r)
		}
		if !strings.Contains(r, "echo ") || strings.Index(r, "echo ") > strings.Index(r, "go build") {
			t.Errorf("make %s says nothing before its build (minutes the first time):\n%s", tc.target, r)
		}
	}
	// The docs: every binary under bin/ is one of the two, a build line
	// gives bin/parqdb-sql exactly the DuckDB tags, and every example of
	// the SQL features runs parqdb-sql.
	names := regexp.MustCompile(`bin/parqdb[-\w.]*`)
	output := regexp.MustCompile(`-o bin/(parqdb[-\w]*)`)
	sqlUse := regexp.MustCompile(`^(bin/)?parqdb(-sql)?\b.* (sql|serve .*--flight)\b`)
	docs := append([]string{"../../README.md"}, mustGlob(t, "../../docs/*.md")...)
	mentions := 0
	for _, f := range docs {
		if strings.Contains(f, "benchmarks") { // dated measurement recipes name their own binaries
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, n := range names.FindAllString(line, -1) {
				if n != "bin/parqdb" && n != "bin/parqdb-sql" {
					t.Errorf("%s:%d names %s, not bin/parqdb or bin/parqdb-sql", f, i+1, n)
				}
				if n == "bin/parqdb-sql" {
					mentions++
				}
			}
			if m := output.FindStringSubmatch(line); m != nil && (m[1] == "parqdb-sql") != strings.Contains(line, "duckdb") {
				t.Errorf("%s:%d builds bin/%s with the wrong tags: %s", f, i+1, m[1], line)
			}
			cmd := strings.TrimSpace(line)
			if m := sqlUse.FindStringSubmatch(cmd); m != nil && m[2] == "" && !synopsis.MatchString(cmd) {
				t.Errorf("%s:%d runs the SQL features with bin/parqdb (the build without them): %s", f, i+1, cmd)
			}
		}
	}
	if mentions < 2 {
		t.Errorf("the README and docs name bin/parqdb-sql %d times", mentions)
	}
	// The errors of the build without SQL say how to get it.
	if sqlengine.Available {
		return
	}
	for _, msg := range []string{sqlengine.ErrUnavailable.Error(), cliError(t, "sql", "SELECT 1"), cliError(t, "serve", "--flight", "127.0.0.1:0")} {
		if !strings.Contains(msg, "make build-sql") || !strings.Contains(msg, "bin/parqdb-sql") {
			t.Errorf("the error does not name make build-sql and bin/parqdb-sql: %s", msg)
		}
	}
}

// cliError runs the CLI in-process and returns what it prints on failure.
func cliError(t *testing.T, args ...string) string {
	t.Helper()
	out, code := runCLI(t, append([]string{"--warehouse", t.TempDir()}, args...)...)
	if code == exitOK {
		t.Fatalf("%v: exit 0, want a failure: %s", args, out)
	}
	return out
}

// TestSelfMatchDistance: on the cosine GloVe index, a row's distance to
// itself is its LVQ8 reconstruction error without refine (small, not 0:
// docs/search.md, "_distance") and exactly 0 with refine.
func TestSelfMatchDistance(t *testing.T) {
	wh := gloveWarehouse(t)
	for _, word := range []string{"king", "queen", "the", "paris"} {
		for _, refine := range []string{"0", "1", "4"} {
			out, errs, code := runSplit(t, "--warehouse", wh, "search", "words", "--near-key", word, "-k", "1",
				"--refine", refine, "--format", "json", "--columns", "word")
			if code != exitOK {
				t.Fatalf("search %s: exit %d: %s", word, code, errs)
			}
			var res struct {
				Results []struct {
					Word     string  `json:"word"`
					Distance float64 `json:"_distance"`
				} `json:"results"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Results) != 1 || res.Results[0].Word != word {
				t.Fatalf("search %s --refine %s: %v %s", word, refine, err, out)
			}
			d := res.Results[0].Distance
			if refine == "0" && !(d > 0 && d < 1e-4) || refine != "0" && d != 0 {
				t.Errorf("%s --refine %s: self-match distance %g; want exactly 0 with refine, in (0, 1e-4) without", word, refine, d)
			}
		}
	}
}
