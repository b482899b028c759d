package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs parqdb with args and returns its standard output and the exit
// code run would give.
func runCLI(t *testing.T, args ...string) (string, int) {
	t.Helper()
	root, _ := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil && !errors.Is(err, errSilent) {
		out.WriteString(err.Error())
	}
	return out.String(), exitCode(err)
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

const mdTestdata = "../../metadata/testdata"

func TestMetadataValidateDirectory(t *testing.T) {
	dir := t.TempDir()
	valid := []string{"base.json", "spec-example.json", "unicode.json", "minimal.json"}
	invalid := map[string]string{ // file → a path its problem names
		"nlist-above-ntotal.json":    "snapshots[0].parameters.nlist",
		"duplicate-key-root.json":    "format-version",
		"trailing-value.json":        "(document)",
		"log-final-not-current.json": "snapshot-log[1].snapshot-id",
	}
	for _, f := range valid {
		copyFile(t, filepath.Join(mdTestdata, "valid", f), filepath.Join(dir, "ok-"+f))
	}
	for f := range invalid {
		copyFile(t, filepath.Join(mdTestdata, "invalid", f), filepath.Join(dir, "bad-"+f))
	}
	// Not *.json: ignored.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}

	out, code := runCLI(t, "metadata", "validate", dir)
	if code != exitProblem {
		t.Errorf("exit %d, want %d", code, exitProblem)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, f := range valid {
		want := filepath.Join(dir, "ok-"+f) + ": ok"
		if !containsLine(lines, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	for f, path := range invalid {
		file := filepath.Join(dir, "bad-"+f)
		if containsLine(lines, file+": ok") {
			t.Errorf("%s classified valid", file)
		}
		if !containsPrefix(lines, file+": "+path+": ") {
			t.Errorf("no line %q in:\n%s", file+": "+path+": …", out)
		}
	}
	for _, l := range lines {
		if strings.Contains(l, "notes.txt") {
			t.Errorf("non-JSON file validated: %s", l)
		}
	}
	// Every line names a file of the directory.
	for _, l := range lines {
		if !strings.HasPrefix(l, filepath.Join(dir, "ok-")) && !strings.HasPrefix(l, filepath.Join(dir, "bad-")) {
			t.Errorf("unexpected line %q", l)
		}
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

func containsPrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

func TestMetadataValidateAllFixtures(t *testing.T) {
	// Every valid fixture passes (exit 0) and every invalid one fails.
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"metadata", "validate", mdTestdata + "/valid"}, exitOK},
		{[]string{"metadata", "validate", mdTestdata + "/canonical"}, exitOK},
		{[]string{"metadata", "validate", "--centroid", mdTestdata + "/centroid/valid"}, exitOK},
	} {
		out, code := runCLI(t, tc.args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s", tc.args, code, tc.code, out)
		}
	}
	for _, tc := range []struct {
		dir      string
		centroid bool
	}{
		{mdTestdata + "/invalid", false},
		{mdTestdata + "/centroid/invalid", true},
	} {
		files, _ := filepath.Glob(tc.dir + "/*.json")
		if len(files) == 0 {
			t.Fatalf("no fixtures in %s", tc.dir)
		}
		for _, f := range files {
			args := []string{"metadata", "validate", f}
			if tc.centroid {
				args = []string{"metadata", "validate", "--centroid", f}
			}
			out, code := runCLI(t, args...)
			if code != exitProblem || strings.Contains(out, ": ok\n") || !strings.HasPrefix(out, f+": ") {
				t.Errorf("%s: exit %d, output:\n%s", f, code, out)
			}
		}
	}
}

func TestMetadataValidateCentroidFlag(t *testing.T) {
	// --centroid checks an index metadata file as a centroid document.
	out, code := runCLI(t, "metadata", "validate", "--centroid", mdTestdata+"/valid/base.json")
	if code != exitProblem || !strings.Contains(out, "unknown field") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	// Without the flag a centroid document is recognised by content.
	out, code = runCLI(t, "metadata", "validate", mdTestdata+"/centroid/valid/base.json")
	if code != exitOK || out != mdTestdata+"/centroid/valid/base.json: ok\n" {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// TestMetadataValidateWarehouseGlob runs the README's
// `parqdb metadata validate warehouse/metadata/*/*.json` on a freshly built
// warehouse, whose metadata folder holds both index metadata and centroid
// metadata files: every file is valid. Then it breaks one file of each kind
// and expects exit 1 with a line naming that file and the JSON path.
func TestMetadataValidateWarehouseGlob(t *testing.T) {
	wh := gloveWarehouse(t)
	files, err := filepath.Glob(filepath.Join(wh, "metadata", "*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var indexFile, centroidFile string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"artifact-uuid"`) {
			centroidFile = f
		} else {
			indexFile = f
		}
	}
	if indexFile == "" || centroidFile == "" {
		t.Fatalf("want both kinds of metadata file in the warehouse, got %v", files)
	}
	out, code := runCLI(t, append([]string{"metadata", "validate"}, files...)...)
	if code != exitOK {
		t.Fatalf("healthy warehouse: exit %d:\n%s", code, out)
	}
	for _, f := range files {
		if !strings.Contains(out, f+": ok\n") {
			t.Errorf("no %q in:\n%s", f+": ok", out)
		}
	}

	for _, tc := range []struct {
		file, old, new, path string
	}{
		{indexFile, `"format-version": 1`, `"format-version": 7`, "format-version"},
		{centroidFile, `"clustering-profile-version": 1`, `"clustering-profile-version": 9`, "descriptor.clustering-profile-version"},
	} {
		b, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		broken := strings.Replace(string(b), tc.old, tc.new, 1)
		if broken == string(b) {
			t.Fatalf("%s has no %s", tc.file, tc.old)
		}
		if err := os.WriteFile(tc.file, []byte(broken), 0o644); err != nil {
			t.Fatal(err)
		}
		out, code := runCLI(t, append([]string{"metadata", "validate"}, files...)...)
		if code != exitProblem || !strings.Contains(out, tc.file+": "+tc.path+": ") {
			t.Errorf("broken %s: exit %d, want %d and a line %q:\n%s", tc.file, code, exitProblem, tc.file+": "+tc.path+": …", out)
		}
		if err := os.WriteFile(tc.file, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLooksLikeCentroid(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want bool
	}{
		{`{"format-version": 1, "artifact-uuid": "x", "descriptor": {}}`, true},
		{`{"artifact-uuid": "x", "fingerprint": "y", "roots": `, true}, // truncated
		{`{"format-version": 1, "index-uuid": "x", "snapshots": []}`, false},
		{`{"fingerprint": "y", "snapshots": []}`, false}, // a tie is index metadata
		{`[]`, false},
		{``, false},
		{"\ufeff{\"artifact-uuid\": 1}", false}, // the index parser reports the BOM
	} {
		if got := looksLikeCentroid([]byte(tc.doc)); got != tc.want {
			t.Errorf("looksLikeCentroid(%q) = %v, want %v", tc.doc, got, tc.want)
		}
	}
}

func TestMetadataValidateOneLinePerProblem(t *testing.T) {
	file := filepath.Join(t.TempDir(), "m.json")
	base, err := os.ReadFile(mdTestdata + "/valid/base.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.NewReplacer(`"format-version": 1,`, `"format-version": 2,`, `"nlist": "16"`, `"nlist": "016"`).Replace(string(base))
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := runCLI(t, "metadata", "validate", file)
	want := file + ": format-version: must be 1, got 2\n" + file + `: snapshots[0].parameters.nlist: "016" has a leading zero` + "\n"
	if code != exitProblem || out != want {
		t.Errorf("exit %d, output:\n%s\nwant:\n%s", code, out, want)
	}
}

func TestMetadataValidateUsage(t *testing.T) {
	empty := t.TempDir()
	for _, args := range [][]string{
		{"metadata", "validate"},
		{"metadata", "validate", filepath.Join(empty, "missing.json")},
		{"metadata", "validate", empty},
		{"metadata", "validate", "--nope", mdTestdata + "/valid/base.json"},
	} {
		if out, code := runCLI(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, exitUsage, out)
		}
	}
}

func TestBadSettingsAreUsageErrors(t *testing.T) {
	dir := emptyWarehouse(t)
	for _, args := range [][]string{
		{"--warehouse", dir, "--catalog", "mysql://x", "index", "list"},
		{"--warehouse", dir, "index", "describe", "bad name!"},
	} {
		out, code := runCLI(t, args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d (%s), want %d", args, code, out, exitUsage)
		}
	}
}

// TestExitCodeDataTextIsNotUsage: an error whose text merely contains
// words of cobra's usage errors (a duplicate key "it accepts 2", the
// system's "invalid argument") is a problem (exit 1), not a usage error.
func TestExitCodeDataTextIsNotUsage(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{errors.New(`file "a.parquet": row 3 (key word="it accepts 2"): duplicate source key`), exitProblem},
		{errors.New(`read "wh/x": invalid argument`), exitProblem},
		{errors.New(`unknown command "serach" for "parqdb"`), exitUsage},
		{errors.New(`accepts 1 arg(s), received 2`), exitUsage},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("exitCode(%q) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
