package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestSearchRecallCLI: --recall chooses the calibrated setting and
// --stats reports it; index describe shows the curve once it exists;
// bench --recall adds one row per target.
func TestSearchRecallCLI(t *testing.T) {
	wh := gloveWarehouse(t)
	out, _, code := runSplit(t, "--warehouse", wh, "index", "describe", "words")
	if code != exitOK || !strings.Contains(out, "calibration  none") && !strings.Contains(out, "none (computed by the first --recall search") {
		t.Fatalf("describe before calibration: exit %d\n%s", code, out)
	}
	q := filepath.Join(t.TempDir(), "q.fvecs")
	writeFvecs(t, q, gloveQueries(5))
	_, errs, code := runSplit(t, "--warehouse", wh, "search", "words", "--queries", q, "--recall", "0.95", "--stats", "--format", "json")
	if code != exitOK {
		t.Fatalf("search --recall: exit %d: %s", code, errs)
	}
	var st struct {
		Recall *recallStats `json:"recall"`
	}
	line := errs[strings.LastIndex(strings.TrimSpace(errs), "\n")+1:]
	if err := json.Unmarshal([]byte(line), &st); err != nil || st.Recall == nil {
		t.Fatalf("--stats line %q: %v", line, err)
	}
	r := st.Recall
	if r.Target != 0.95 || r.NProbe < 1 || !r.Met || r.Calibrated < 0.95 {
		t.Fatalf("recall stats %+v", r)
	}
	out, _, code = runSplit(t, "--warehouse", wh, "index", "describe", "words", "--format", "json")
	var d indexDescription
	if code != exitOK || json.Unmarshal([]byte(out), &d) != nil || d.Calibration == nil || len(d.Calibration.Curve) < 3 {
		t.Fatalf("describe after calibration: exit %d\n%s", code, out)
	}
	for i := 1; i < len(d.Calibration.Curve); i++ {
		a, b := d.Calibration.Curve[i-1], d.Calibration.Curve[i]
		if !(b.Cost >= a.Cost && b.Recall > a.Recall) {
			t.Fatalf("curve not increasing at %d: %+v %+v", i, a, b)
		}
	}
	out, errs, code = runSplit(t, "--warehouse", wh, "bench", "words", "--queries", q, "--recall", "0.9,0.99", "--format", "json", "-q", "--cold-queries", "1")
	if code != exitOK {
		t.Fatalf("bench --recall: exit %d: %s", code, errs)
	}
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if len(rows) != 2 {
		t.Fatalf("bench --recall alone measured %d settings, want 2:\n%s", len(rows), out)
	}
	var br benchRow
	if err := json.Unmarshal([]byte(rows[1]), &br); err != nil || br.Target != 0.99 || br.NProbe < r.NProbe {
		t.Fatalf("bench row %s: %v", rows[1], err)
	}
}

func TestRecallFlagErrors(t *testing.T) {
	wh := gloveWarehouse(t)
	for name, tc := range map[string]struct {
		args []string
		msg  string
	}{
		"zero":           {[]string{"search", "words", "--near-key", "king", "--recall", "0"}, "--recall must be a target recall in (0, 1]"},
		"above one":      {[]string{"search", "words", "--near-key", "king", "--recall", "1.5"}, "--recall 1.5 is outside the allowed range [0, 1]"},
		"NaN":            {[]string{"search", "words", "--near-key", "king", "--recall", "NaN"}, "--recall"},
		"with nprobe":    {[]string{"search", "words", "--near-key", "king", "--recall", "0.9", "--nprobe", "4"}, "give --recall or --nprobe, not both"},
		"with refine":    {[]string{"search", "words", "--near-key", "king", "--recall", "0.9", "--refine", "2"}, "give --recall or --refine, not both"},
		"bench bad":      {[]string{"bench", "words", "--queries", gloveSample, "--query-column", "embedding", "--recall", "0.9,2"}, `--recall: "2" is not a target recall in (0, 1]`},
		"create shards":  {[]string{"index", "create", "w2", "--source", gloveSample, "--vector-field", "embedding", "--key-fields", "word", "--shards", "2", "--calibrate"}, "--calibrate needs the build to commit in this process"},
		"vectors shards": {[]string{"index", "create", "w2", "--source", gloveSample, "--vector-field", "embedding", "--key-fields", "word", "--shards", "2", "--vectors-file"}, "--vectors-file needs the build to run in this process"},
		"refresh shards": {[]string{"index", "refresh", "words", "--shards", "2", "--calibrate"}, "--calibrate needs the refresh to commit in this process"},
		"bench garbage":  {[]string{"bench", "words", "--queries", gloveSample, "--query-column", "embedding", "--recall", "high"}, `--recall: "high"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, errs, code := runSplit(t, append([]string{"--warehouse", wh}, tc.args...)...)
			if code != exitUsage || !strings.Contains(errs, tc.msg) {
				t.Fatalf("exit %d, %q; want exit %d mentioning %q", code, errs, exitUsage, tc.msg)
			}
		})
	}
}
