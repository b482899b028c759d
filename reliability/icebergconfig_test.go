package reliability_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestIcebergConfigRead runs the built CLI under strace with HOME (and
// then GOICEBERG_HOME) pointing at a folder holding an .iceberg-go.yaml:
// commands that involve no Iceberg catalog never open it (iceberg-go
// reads it when the process starts unless package icehome stops it), and
// a command that names a catalog reads it, from GOICEBERG_HOME when set.
func TestIcebergConfigRead(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Fatalf("strace is required (apt-get install strace): %v", err)
	}
	parqdbBinary(t)
	dir := t.TempDir()
	home, iceHome := filepath.Join(dir, "home"), filepath.Join(dir, "icehome")
	for _, d := range []string{home, iceHome} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		// A catalog whose database does not exist: the command fails after
		// reading the file, naming the path the file gave.
		yaml := "catalog:\n  lake:\n    uri: sqlite:" + filepath.Join(d, "missing.db") + "\n"
		if err := os.WriteFile(filepath.Join(d, ".iceberg-go.yaml"), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	homeFile, iceFile := filepath.Join(home, ".iceberg-go.yaml"), filepath.Join(iceHome, ".iceberg-go.yaml")
	wh := filepath.Join(dir, "wh")
	src := newSource(t)

	traced := func(t *testing.T, env []string, args ...string) (cliResult, string) {
		t.Helper()
		trace := filepath.Join(t.TempDir(), "strace.log")
		r := runParqdb(t, append([]string{"HOME=" + home}, env...),
			[]string{"strace", "-f", "-qq", "-s", "4096", "-o", trace, "-e", "trace=open,openat,openat2"}, args...)
		log, err := os.ReadFile(trace)
		if err != nil {
			t.Fatal(err)
		}
		return r, string(log)
	}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		// reads is the file the command must open, "" for none.
		reads, fails string
	}{
		{name: "version", args: []string{"version"}},
		{name: "create", args: []string{"--warehouse", wh, "index", "create", "v", "--source", src + "/", "--vector-field", "embedding", "--key-fields", "id", "--nlist", "8", "-q"}},
		{name: "list", args: []string{"--warehouse", wh, "index", "list"}},
		{name: "search", args: []string{"--warehouse", wh, "search", "v", "--near-key", "7", "-k", "3"}},
		{name: "gc", args: []string{"--warehouse", wh, "gc", "--dry-run"}},
		{name: "GOICEBERG_HOME set, no Iceberg", env: []string{"GOICEBERG_HOME=" + iceHome}, args: []string{"--warehouse", wh, "index", "list"}},
		{name: "Iceberg source", args: []string{"--warehouse", wh, "index", "create", "ice", "--source", "iceberg://lake/ns/t", "--vector-field", "embedding", "--key-fields", "id"},
			reads: homeFile, fails: filepath.Join(home, "missing.db")},
		{name: "Iceberg source, GOICEBERG_HOME", env: []string{"GOICEBERG_HOME=" + iceHome}, args: []string{"--warehouse", wh, "index", "create", "ice", "--source", "iceberg://lake/ns/t", "--vector-field", "embedding", "--key-fields", "id"},
			reads: iceFile, fails: filepath.Join(iceHome, "missing.db")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, log := traced(t, tc.env, tc.args...)
			if tc.fails == "" && r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.output())
			}
			if tc.fails != "" && (r.code == 0 || !strings.Contains(r.output(), tc.fails)) {
				t.Fatalf("exit %d, want a failure naming %s (the catalog the file configures)\n%s", r.code, tc.fails, r.output())
			}
			for _, f := range []string{homeFile, iceFile} {
				opened := strings.Contains(log, `"`+f+`"`)
				if want := f == tc.reads; opened != want {
					t.Errorf("%s opened: %v, want %v", f, opened, want)
				}
			}
		})
	}
}
