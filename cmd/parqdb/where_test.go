package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestSearchWhere checks --where for every query form: every row matches,
// k rows come back when enough match, the --stats line reports the
// filter, and bad predicates are usage errors naming the position, the
// column and the available columns.
func TestSearchWhere(t *testing.T) {
	wh := gloveWarehouse(t)
	qfile := filepath.Join(t.TempDir(), "q.fvecs")
	writeFvecs(t, qfile, gloveQueries(3))
	vec, _ := json.Marshal(gloveQueries(1)[0])
	for _, tt := range []struct {
		name  string
		args  []string
		where string
		check func(rank float64) bool
		want  int // rows per query
	}{
		{"near-key", []string{"--near-key", "king"}, "rank > 5000 AND word LIKE 'p%'", func(r float64) bool { return r > 5000 }, 10},
		{"vector", []string{"--vector", string(vec)}, "rank BETWEEN 100 AND 200", func(r float64) bool { return r >= 100 && r <= 200 }, 10},
		{"queries", []string{"--queries", qfile}, "rank <= 3", func(r float64) bool { return r <= 3 }, 3},
		{"none", []string{"--near-key", "king"}, "rank < 0", func(float64) bool { return false }, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--warehouse", wh, "search", "words", "--format", "json", "--stats", "--columns", "word,rank", "--where", tt.where}, tt.args...)
			out, errs, code := runSplit(t, args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			for _, line := range lines {
				var r struct {
					Results []map[string]any `json:"results"`
				}
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				if len(r.Results) != tt.want {
					t.Errorf("%d rows, want %d: %s", len(r.Results), tt.want, line)
				}
				for _, row := range r.Results {
					if !tt.check(row["rank"].(float64)) {
						t.Errorf("row %v does not match %s", row, tt.where)
					}
				}
			}
			if !strings.Contains(errs, `"filter_rows":`) && tt.want > 0 || !strings.Contains(errs, `"where":`) {
				t.Errorf("--stats line lacks the filter: %s", errs)
			}
			// Every query's plan is reported: exact or lists.
			var st struct {
				Queries int   `json:"queries"`
				Exact   int   `json:"filter_exact_plans"`
				Lists   int   `json:"filter_list_plans"`
				Scanned int64 `json:"lists"`
			}
			for _, line := range strings.Split(errs, "\n") {
				if strings.Contains(line, `"where":`) {
					if err := json.Unmarshal([]byte(line), &st); err != nil {
						t.Fatalf("%s: %v", line, err)
					}
				}
			}
			if tt.want > 0 && (st.Exact+st.Lists != st.Queries || st.Lists > 0 && st.Scanned == 0) {
				t.Errorf("--stats: %+v, want one plan per query (and lists scanned by the list plan): %s", st, errs)
			}
		})
	}
	for _, tt := range []struct{ where, msg string }{
		{"rnk < 5", `position 1`},
		{"rnk < 5", `the columns are: word, rank, embedding`},
		{"rank < 'a'", `column "rank" is integer but the literal is string`},
		{"rank <", "ends early"},
	} {
		_, errs, code := runSplit(t, "--warehouse", wh, "search", "words", "--near-key", "king", "--where", tt.where)
		if code != exitUsage || !strings.Contains(errs, tt.msg) {
			t.Errorf("--where %q: exit %d, %s; want exit %d saying %q", tt.where, code, errs, exitUsage, tt.msg)
		}
	}
}

// TestBenchWhere checks bench --where: recall against brute force over the
// matching rows, 1 with every list probed and refine; the stderr line
// reports the selectivity; --ground-truth is refused with --where.
func TestBenchWhere(t *testing.T) {
	wh := gloveWarehouse(t)
	dir := t.TempDir()
	qf := filepath.Join(dir, "q.fvecs")
	writeFvecs(t, qf, gloveQueries(20))
	out, errs, code := runSplit(t, "--warehouse", wh, "bench", "words", "--queries", qf, "-k", "5",
		"--nprobe", "2,50", "--refine", "3", "--format", "json", "--threads", "1", "--cold-queries", "3", "--where", "rank > 2000")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, `where "rank" > 2000: 8000 of 10000 rows match`) {
		t.Errorf("stderr lacks the filter line: %s", errs)
	}
	var rows []benchRow
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r benchRow
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %q", err, l)
		}
		rows = append(rows, r)
	}
	if len(rows) != 2 || rows[1].Recall != 1.0 || rows[0].Recall <= 0 || rows[0].QPS1 <= 0 {
		t.Fatalf("rows %+v: want 2 settings, recall 1 at nprobe 50", rows)
	}
	_, errs, code = runSplit(t, "--warehouse", wh, "bench", "words", "--queries", qf, "--where", "rank > 1", "--ground-truth", qf)
	if code != exitUsage || !strings.Contains(errs, "--ground-truth is unfiltered") {
		t.Errorf("--ground-truth with --where: exit %d: %s", code, errs)
	}
}
