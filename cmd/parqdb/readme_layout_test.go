package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMELayoutNamesEveryPackage: every top-level folder of the
// repository that holds Go packages, and every package folder directly
// under internal/, has its row (or, for internal/, its name) in the
// README's layout table, so that the table cannot fall behind the tree.
func TestREADMELayoutNamesEveryPackage(t *testing.T) {
	const root = "../.."
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(data), "\n## Layout\n")
	if !ok {
		t.Fatal("README has no ## Layout section")
	}
	if i := strings.Index(layout, "\n## "); i >= 0 {
		layout = layout[:i]
	}
	rows := map[string]string{} // first column's folder → second column
	cell := regexp.MustCompile("^\\| `([^`]+)/` \\| (.*) \\|$")
	for _, line := range strings.Split(layout, "\n") {
		if m := cell.FindStringSubmatch(line); m != nil {
			rows[strings.SplitN(m[1], "/", 2)[0]] = m[2]
		}
	}
	if len(rows) < 10 {
		t.Fatalf("only %d rows read from the layout table: %v", len(rows), rows)
	}
	top, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var checked int
	for _, d := range top {
		if !d.IsDir() || strings.HasPrefix(d.Name(), ".") || !holdsGo(t, filepath.Join(root, d.Name())) {
			continue
		}
		checked++
		if _, ok := rows[d.Name()]; !ok {
			t.Errorf("the README's layout table has no row for %s/", d.Name())
		}
	}
	internal, err := os.ReadDir(filepath.Join(root, "internal"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range internal {
		if !d.IsDir() || !holdsGo(t, filepath.Join(root, "internal", d.Name())) {
			continue
		}
		checked++
		if !strings.Contains(rows["internal"], "`"+d.Name()+"`") {
			t.Errorf("the README's internal/ row does not name %s", d.Name())
		}
	}
	if checked < 20 {
		t.Fatalf("only %d folders checked", checked)
	}
}

// holdsGo reports whether dir or a folder below it (testdata excluded)
// holds a .go file.
func holdsGo(t *testing.T, dir string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case found:
			return filepath.SkipAll
		case d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != dir:
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(d.Name(), ".go"):
			found = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
