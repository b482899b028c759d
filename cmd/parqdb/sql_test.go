//go:build duckdb

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSQLEqualsSearch: `parqdb sql` over ivf_search_key (and its filtered
// form ivf_search_key_where) gives the rows `parqdb search --near-key`
// (with --where) gives, byte for byte, source columns and _distance
// included.
func TestSQLEqualsSearch(t *testing.T) {
	wh := cliIndex(t)
	for _, tc := range []struct {
		name, sql string
		cli       []string
	}{
		{"unfiltered", "SELECT word, rank, _distance FROM ivf_search_key('words', 'king', 5)", nil},
		{"where, lists", "SELECT word, rank, _distance FROM ivf_search_key_where('words', 'king', 5, 'rank > 2000')",
			[]string{"--where", "rank > 2000"}},
		{"where, exact", "SELECT word, rank, _distance FROM ivf_search_key_where('words', 'king', 5, 'word LIKE ''qu%'' AND rank < 9000')",
			[]string{"--where", "word LIKE 'qu%' AND rank < 9000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{wh, "search", "words", "--near-key", "king", "-k", "5", "--columns", "word,rank", "--format", "json"}, tc.cli...)
			out, code := runCLI(t, args...)
			if code != exitOK {
				t.Fatalf("search: %s", out)
			}
			var cli struct{ Results []json.RawMessage }
			if err := json.Unmarshal([]byte(out), &cli); err != nil {
				t.Fatal(err)
			}
			out, code = runCLI(t, wh, "sql", tc.sql, "--format", "json")
			if code != exitOK {
				t.Fatalf("sql: %d %s", code, out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != len(cli.Results) || len(lines) == 0 {
				t.Fatalf("sql gives %d rows, search %d:\n%s", len(lines), len(cli.Results), out)
			}
			for i, l := range lines {
				if l != string(cli.Results[i]) {
					t.Fatalf("row %d:\nsql    %s\nsearch %s", i, l, cli.Results[i])
				}
			}
		})
	}
	if _, code := runCLI(t, wh, "sql", "SELEC 1"); code != exitUsage {
		t.Fatalf("a SQL error exits %d, want %d", code, exitUsage)
	}
}

// TestSQLCreatesNoWarehouse: sql, like every command but index create,
// refuses a location without a warehouse and creates nothing there.
func TestSQLCreatesNoWarehouse(t *testing.T) {
	root := t.TempDir()
	wh := root + "/typo"
	out, code := runCLI(t, "--warehouse", wh, "sql", "SELECT 1")
	if code != exitProblem || !strings.Contains(out, "no warehouse at "+wh) {
		t.Errorf("exit %d, want %d and 'no warehouse at %s':\n%s", code, exitProblem, wh, out)
	}
	if got := tree(t, root); len(got) != 1 {
		t.Errorf("sql created files: %v", got)
	}
}

// TestSQLJoinsFiles: the local sql reads files with the user's rights, so
// ivf_search joins with read_parquet; --no-external-access refuses the
// same file (the indexes' own sources stay readable as views).
func TestSQLJoinsFiles(t *testing.T) {
	wh := cliIndex(t)
	b, err := os.ReadFile("../../examples/glove/glove-10k.parquet")
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "ranks.parquet")
	if err := os.WriteFile(other, b, 0o644); err != nil {
		t.Fatal(err)
	}
	stmt := "SELECT r.word, p.rank FROM ivf_search_key('words', 'king', 3) r JOIN read_parquet('" + other + "') p USING (word) ORDER BY r._distance"
	out, code := runCLI(t, wh, "sql", stmt, "--format", "csv")
	if code != exitOK || !strings.HasPrefix(out, "word,rank\nking,692\n") || strings.Count(out, "\n") != 4 {
		t.Fatalf("join with read_parquet: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, wh, "sql", "--no-external-access", stmt)
	if code != exitUsage || !strings.Contains(out, ranksDenied) {
		t.Fatalf("--no-external-access: exit %d, want %d and %q:\n%s", code, exitUsage, ranksDenied, out)
	}
	out, code = runCLI(t, wh, "sql", "--no-external-access", "SELECT count(*) AS n FROM words", "--format", "csv")
	if code != exitOK || out != "n\n10000\n" {
		t.Fatalf("source view with --no-external-access: exit %d\n%s", code, out)
	}
}

// ranksDenied is DuckDB's refusal of a file outside the allowed paths.
const ranksDenied = "disabled by configuration"

// TestSQLStaleFolderSource: after a file is appended to a folder source,
// `parqdb sql` keeps answering from the snapshot with one warning on
// stderr, and a key only the new file has fails naming the file.
func TestSQLStaleFolderSource(t *testing.T) {
	_, src, wh, _ := gloveFolderIndex(t)
	appendWord(t, src)
	out, errs, code := runSplit(t, wh, "sql", "SELECT word FROM ivf_search_key('words', 'king', 3)")
	if code != exitOK || !strings.Contains(out, "queen") {
		t.Fatalf("sql after an append: exit %d: %s %s", code, out, errs)
	}
	if n := strings.Count(errs, "warning:"); n != 1 || !strings.Contains(errs, `"part-1.parquet"`) {
		t.Fatalf("sql after an append: %d warnings, want one naming the file: %q", n, errs)
	}
	_, errs, code = runSplit(t, wh, "sql", "SELECT word FROM ivf_search_key('words', 'zyzzyva', 3)")
	if code == exitOK || !strings.Contains(errs, "part-1.parquet") || !strings.Contains(errs, "snapshot does not index") {
		t.Fatalf("sql, key only in the appended file: exit %d: %s", code, errs)
	}
}
