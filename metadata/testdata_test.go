package metadata

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite generated testdata (invalid documents, canonical goldens)")

// mutation derives an invalid document from a valid base document.
type mutation func(t *testing.T, doc string) string

// repl replaces the first occurrence of old (which must occur) with new.
func repl(old, new string) mutation { return replN(old, new, 1) }

// replAll replaces every occurrence of old (which must occur).
func replAll(old, new string) mutation { return replN(old, new, -1) }

func replN(old, new string, n int) mutation {
	return func(t *testing.T, doc string) string {
		t.Helper()
		if !strings.Contains(doc, old) {
			t.Fatalf("mutation target %q not in base document", old)
		}
		return strings.Replace(doc, old, new, n)
	}
}

// cut replaces the text from the first from (inclusive) up to the next to
// (exclusive) with with.
func cut(from, to, with string) mutation {
	return func(t *testing.T, doc string) string {
		t.Helper()
		i := strings.Index(doc, from)
		j := strings.Index(doc[i+1:], to)
		if i < 0 || j < 0 {
			t.Fatalf("cut %q..%q not in base document", from, to)
		}
		return doc[:i] + with + doc[i+1+j:]
	}
}

func whole(s string) mutation { return func(*testing.T, string) string { return s } }

func prepend(s string) mutation { return func(_ *testing.T, doc string) string { return s + doc } }

func appendText(s string) mutation { return func(_ *testing.T, doc string) string { return doc + s } }

// invalidCase is one invalid document in testdata: its mutation from the
// base and the problem the parser must report (JSON path and a substring
// of the rule).
type invalidCase struct {
	name string
	mut  mutation
	path string
	rule string
}

// checkInvalidCases generates (with -update) or verifies the invalid
// documents of cases under dir, derived from the base document, and checks
// that parse reports the expected problem for each.
func checkInvalidCases(t *testing.T, base, dir string, cases []invalidCase, parse func(file string, data []byte) error) {
	t.Helper()
	baseDoc, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Fatalf("duplicate case name %q", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir, c.name+".json")
			want := []byte(c.mut(t, string(baseDoc)))
			if *update {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, want, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s differs from its mutation of %s (run go test -update)", file, base)
			}
			err = parse(file, got)
			if err == nil {
				t.Fatalf("%s: accepted, want %s: %s", file, c.path, c.rule)
			}
			checkProblem(t, err, file, c.path, c.rule)
		})
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if name := strings.TrimSuffix(e.Name(), ".json"); !seen[name] {
			t.Errorf("%s/%s has no case in the table (stale fixture?)", dir, e.Name())
		}
	}
}

// checkProblem asserts that err is a *ValidationError for file, wraps
// ErrInvalid and lists a problem at path whose rule contains rule.
func checkProblem(t *testing.T, err error, file, path, rule string) {
	t.Helper()
	ve := asValidationError(t, err)
	if ve.File != file {
		t.Errorf("ValidationError.File = %q, want %q", ve.File, file)
	}
	for _, p := range ve.Problems {
		if p.Path == path && strings.Contains(p.Rule, rule) {
			return
		}
	}
	t.Errorf("no problem at %q containing %q; got:\n%v", path, rule, err)
}

func asValidationError(t *testing.T, err error) *ValidationError {
	t.Helper()
	ve, ok := err.(*ValidationError)
	if !ok {
		t.Fatalf("error %T (%v) is not a *ValidationError", err, err)
	}
	if len(ve.Problems) == 0 {
		t.Fatal("ValidationError without problems")
	}
	return ve
}

// validFiles lists the *.json files of dir, sorted.
func validFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s: %v", dir, err)
	}
	slices.Sort(files)
	return files
}

// checkCanonical checks, for every valid document in dir, that it parses,
// that its canonical form equals the golden file in goldenDir (written with
// -update) and that the canonical form is a fixed point.
func checkCanonical[T any](t *testing.T, dir, goldenDir string, parse func(string, []byte) (T, error), marshal func(T) ([]byte, error)) {
	for _, file := range validFiles(t, dir) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			v, err := parse(file, data)
			if err != nil {
				t.Fatalf("valid document rejected:\n%v", err)
			}
			out, err := marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join(goldenDir, filepath.Base(file))
			if *update {
				if err := os.MkdirAll(goldenDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(out, want) {
				t.Fatalf("canonical form differs from %s:\n%s", golden, out)
			}
			v2, err := parse(golden, out)
			if err != nil {
				t.Fatalf("canonical form rejected: %v", err)
			}
			out2, err := marshal(v2)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, out2) {
				t.Fatalf("canonical form is not a fixed point:\n%s\n---\n%s", out, out2)
			}
		})
	}
}
