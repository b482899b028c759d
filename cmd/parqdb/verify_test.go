package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
)

// verifyIndex builds a small lvq4 index "v" with a vectors file through the
// CLI and returns the warehouse folder.
func verifyIndex(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 1))
	keys := make([]int64, 1200)
	vecs := make([][]float32, len(keys))
	for i := range keys {
		keys[i] = int64(i)
		vecs[i] = make([]float32, 9)
		for j := range vecs[i] {
			vecs[i][j] = float32(i%4) + float32(rng.NormFloat64())
		}
	}
	var buf bytes.Buffer
	if err := sourcetest.WriteVectors(&buf, keys, vecs, sourcetest.Options{RowGroupRows: 300}); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "src.parquet")
	if err := os.WriteFile(src, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	wh := filepath.Join(dir, "wh")
	if out, code := runCLI(t, "--warehouse", wh, "index", "create", "v", "--source", src, "--vector-field", "embedding",
		"--key-fields", "id", "--encoding", "lvq4", "--nlist", "12", "--vectors-file", "-q"); code != exitOK {
		t.Fatalf("index create: %d %s", code, out)
	}
	return wh
}

func TestIndexVerify(t *testing.T) {
	wh := verifyIndex(t)

	out, code := runCLI(t, "--warehouse", wh, "index", "verify", "v", "-q")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"postings rows:", "lvq codes:", "assignment:", "vectors file:         ok", "verdict: ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}

	out, code = runCLI(t, "--warehouse", wh, "index", "verify", "v", "--format", "json", "-q")
	if code != exitOK {
		t.Fatalf("json: exit %d:\n%s", code, out)
	}
	var rep struct {
		Index    string `json:"index"`
		Snapshot int64  `json:"snapshot"`
		OK       bool   `json:"ok"`
		Checks   []struct {
			Name   string `json:"name"`
			OK     bool   `json:"ok"`
			Detail string `json:"detail"`
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if rep.Index != "v" || rep.Snapshot != 1 || !rep.OK || len(rep.Checks) < 10 {
		t.Fatalf("json report %+v", rep)
	}

	// Corrupt the manifest: exit 1, the failed check named.
	matches, err := filepath.Glob(filepath.Join(wh, "indexes", "*", "*", "_meta", "manifest.json"))
	if err != nil || len(matches) != 1 {
		t.Fatalf("manifest: %v %v", matches, err)
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(matches[0], data[:len(data)-10], 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = runCLI(t, "--warehouse", wh, "index", "verify", "v", "-q")
	if code != exitProblem || !strings.Contains(out, "manifest:") || !strings.Contains(out, "FAIL") {
		t.Fatalf("corrupt manifest: exit %d:\n%s", code, out)
	}
	out, code = runCLI(t, "--warehouse", wh, "index", "verify", "v", "-q", "--format", "json")
	if code != exitProblem || !strings.Contains(out, `"ok": false`) {
		t.Fatalf("corrupt manifest, json: exit %d:\n%s", code, out)
	}
}

func TestIndexVerifyUsage(t *testing.T) {
	wh := "--warehouse=" + emptyWarehouse(t)
	for _, args := range [][]string{
		{"index", "verify"},
		{"index", "verify", "v", "--format", "xml"},
		{"index", "verify", "v", "--snapshot", "-1"},
	} {
		if out, code := runCLI(t, append([]string{wh}, args...)...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d:\n%s", args, code, exitUsage, out)
		}
	}
	if out, code := runCLI(t, wh, "index", "verify", "missing", "-q"); code != exitProblem || !strings.Contains(out, "not found") {
		t.Errorf("missing index: exit %d:\n%s", code, out)
	}
}
