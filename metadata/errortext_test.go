package metadata

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInvalidErrorTexts pins the whole error of every invalid document in
// testdata, every problem with its path and rule in order, against a golden
// file (written with -update): the per-case table in invalid_test.go checks
// one problem each, this catches any other change in what is reported.
func TestInvalidErrorTexts(t *testing.T) {
	for _, c := range []struct {
		dir, golden string
		parse       func(string, []byte) error
	}{
		{"testdata/invalid", "testdata/invalid-errors.golden",
			func(f string, d []byte) error { _, err := ParseFile(f, d); return err }},
		{"testdata/centroid/invalid", "testdata/centroid/invalid-errors.golden",
			func(f string, d []byte) error { _, err := ParseCentroidFile(f, d); return err }},
	} {
		t.Run(c.dir, func(t *testing.T) {
			var b bytes.Buffer
			for _, file := range validFiles(t, c.dir) {
				data, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "== %s\n%v\n", filepath.Base(file), c.parse(file, data))
			}
			if *update {
				if err := os.WriteFile(c.golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(c.golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if got := b.String(); got != string(want) {
				t.Errorf("errors differ from %s (run go test -update if intended):\n%s", c.golden, firstDiff(got, string(want)))
			}
		})
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got: %s\nwant: %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(g), len(w))
}

// TestLazyPathsFormatLikeEager checks that paths built step by step
// (jpath, and the tree reader's step lists) format exactly as nesting the
// member and index functions does, including names that need quoting.
func TestLazyPathsFormatLikeEager(t *testing.T) {
	names := []string{"snapshots", "a.b", "", `q"`, "é", "\xff", "ivf_centroids", "x y", "a[0]"}
	for _, first := range append([]string{""}, names...) {
		for _, second := range names {
			for _, i := range []int{0, 7, 123} {
				// first (a member of the document, or the document itself
				// when ""), then element i, then member second.
				eager := index("", i)
				var steps []jpath
				root := lit("")
				var p1 jpath
				if first != "" {
					eager = index(member("", first), i)
					p1 = root.key(first)
					steps = append(steps, jpath{name: first, kind: pathMember})
				} else {
					p1 = root
				}
				p2 := p1.at(i)
				p3 := p2.key(second)
				steps = append(steps, jpath{i: i, kind: pathIndex}, jpath{name: second, kind: pathMember})
				eager = member(eager, second)
				if got := p3.String(); got != eager {
					t.Errorf("jpath %q/%d/%q = %q, want %q", first, i, second, got, eager)
				}
				if got := formatSteps(steps); got != eager {
					t.Errorf("steps %q/%d/%q = %q, want %q", first, i, second, got, eager)
				}
			}
		}
	}
	lp := lit("descriptor.nlist")
	if got := lp.String(); got != "descriptor.nlist" {
		t.Errorf("literal = %q", got)
	}
	pp := lit("properties")
	if q := pp.key("a.b"); q.String() != `properties["a.b"]` {
		t.Errorf("quoted member of a literal = %q", q.String())
	}
}

// lenientMetadata decodes data without the semantic checks, so that
// documents breaking any rule of Validate become values; nil when the
// document is not even structurally valid.
func lenientMetadata(data []byte) *Metadata {
	var ps problems
	root := parseTree(data, &ps)
	if len(ps.list) > 0 {
		return nil
	}
	m := new(Metadata)
	(&decoder{ps: &ps}).metadata(root, m)
	if len(ps.list) > 0 {
		return nil
	}
	return m
}

// checkSuccessorShortcut checks that Successor's check of the new snapshot
// alone reports exactly what validating the whole result reports, for every
// snapshot of doc as the new snapshot of every valid testdata document.
func checkSuccessorShortcut(t *testing.T, bases []*Metadata, doc []byte) {
	t.Helper()
	lm := lenientMetadata(doc)
	if lm == nil {
		return
	}
	for _, base := range bases {
		for _, snap := range lm.Snapshots {
			for _, now := range []int64{-5, 0, 1750000500000} {
				m, err := successor(base, snap, now)
				if m == nil {
					continue
				}
				if full := m.Validate(); fmt.Sprint(err) != fmt.Sprint(full) {
					t.Fatalf("Successor reports\n%v\nbut Validate of its result reports\n%v", err, full)
				}
			}
		}
	}
}

func validBases(t testing.TB) []*Metadata {
	files, _ := filepath.Glob("testdata/valid/*.json")
	var bases []*Metadata
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		bases = append(bases, m)
	}
	if len(bases) == 0 {
		t.Fatal("no valid documents")
	}
	return bases
}

func TestSuccessorChecksLikeValidate(t *testing.T) {
	bases := validBases(t)
	files, _ := filepath.Glob("testdata/*/*.json")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkSuccessorShortcut(t, bases, data)
	}
}

// FuzzSuccessor is TestSuccessorChecksLikeValidate for any document.
func FuzzSuccessor(f *testing.F) {
	addSeeds(f)
	bases := validBases(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSuccessorShortcut(t, bases, data)
	})
}

// TestDuplicateKeyFieldInLongList covers the map-based duplicate check
// that long source-key-fields lists take: the same problems, each naming
// the first occurrence, as the short-list search.
func TestDuplicateKeyFieldInLongList(t *testing.T) {
	m := mustParse(t, "testdata/valid/minimal.json")
	for _, n := range []int{5, 40} {
		var keys []string
		for i := range n {
			keys = append(keys, fmt.Sprintf("k%d", i))
		}
		keys = append(keys, "k3", "k1", "k3")
		c := m.Clone()
		c.Snapshots[0].SourceKeyFields = keys
		ve := asValidationError(t, c.Validate())
		want := []Problem{
			{fmt.Sprintf("snapshots[0].source-key-fields[%d]", n), `duplicate source key field "k3" (also source-key-fields[3])`},
			{fmt.Sprintf("snapshots[0].source-key-fields[%d]", n+1), `duplicate source key field "k1" (also source-key-fields[1])`},
			{fmt.Sprintf("snapshots[0].source-key-fields[%d]", n+2), `duplicate source key field "k3" (also source-key-fields[3])`},
		}
		if fmt.Sprint(ve.Problems) != fmt.Sprint(want) {
			t.Errorf("%d keys: got %v, want %v", n, ve.Problems, want)
		}
	}
}
