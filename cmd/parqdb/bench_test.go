package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchRecallAndPlot(t *testing.T) {
	wh := gloveWarehouse(t)
	dir := t.TempDir()
	qf := filepath.Join(dir, "q.fvecs")
	writeFvecs(t, qf, gloveQueries(20))
	png := filepath.Join(dir, "curve.png")
	out, errs, code := runSplit(t, "--warehouse", wh, "bench", "words", "--queries", qf, "-k", "5",
		"--nprobe", "1,50", "--refine", "0,3", "--plot", png, "--format", "json", "--threads", "2", "--cold-queries", "5", "--join")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rows []benchRow
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r benchRow
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %q", err, l)
		}
		rows = append(rows, r)
	}
	if len(rows) != 4 {
		t.Fatalf("%d settings, want 4", len(rows))
	}
	for _, r := range rows {
		if r.QPS1 <= 0 || r.QPSN <= 0 || r.QPSJoin <= 0 || r.QPSKeysCPU <= 0 || r.QPSJoinCPU <= 0 || r.Candidates <= 0 || r.ColdBytes <= 0 || r.ColdRequests <= 0 {
			t.Fatalf("setting %+v: a measure is missing", r)
		}
	}
	// All 50 lists with refine: exact.
	if r := rows[3]; r.NProbe != 50 || r.Refine != 3 || r.Recall != 1.0 {
		t.Fatalf("nprobe 50 refine 3: %+v, want recall 1", r)
	}
	if rows[0].Recall > rows[1].Recall {
		t.Fatalf("recall fell with nprobe: %+v", rows[:2])
	}
	b, err := os.ReadFile(png)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n")) {
		t.Fatalf("plot: %v, %d bytes", err, len(b))
	}
}

func TestBenchGroundTruthFile(t *testing.T) {
	wh := gloveWarehouse(t)
	dir := t.TempDir()
	qf := filepath.Join(dir, "q.fvecs")
	writeFvecs(t, qf, gloveQueries(2))
	var b []byte
	for _, row := range [][]int32{{0, 1, 2}, {3, 4, 5}} {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(row)))
		for _, x := range row {
			b = binary.LittleEndian.AppendUint32(b, uint32(x))
		}
	}
	gt := filepath.Join(dir, "gt.ivecs")
	os.WriteFile(gt, b, 0o644)
	got, err := readIvecs(gt)
	if err != nil || len(got) != 2 || got[1][2] != 5 {
		t.Fatalf("readIvecs: %v %v", got, err)
	}
	// k larger than the ground truth rows: refused.
	_, errs, code := runSplit(t, "--warehouse", wh, "bench", "words", "--queries", qf, "--ground-truth", gt, "-k", "10", "--nprobe", "2")
	if code != exitProblem || !strings.Contains(errs, "has 3 neighbours") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// k = 3: runs, with recall measured against rows 0..5.
	out, errs, code := runSplit(t, "--warehouse", wh, "bench", "words", "--queries", qf, "--ground-truth", gt, "-k", "3", "--nprobe", "2", "--format", "json")
	if code != exitOK || !strings.Contains(out, `"recall"`) {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	if _, errs, code := runSplit(t, "--warehouse", wh, "bench", "words", "--queries", qf, "--nprobe", "0"); code != exitUsage {
		t.Fatalf("--nprobe 0: exit %d %s", code, errs)
	}
}
