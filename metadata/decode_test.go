package metadata

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// reverseFields reverses every object's field list until the test ends.
func reverseFields(t *testing.T) {
	t.Helper()
	reverse := func() { // its own inverse
		slices.Reverse(metadataFields)
		slices.Reverse(logEntryFields)
		slices.Reverse(snapshotFields)
		slices.Reverse(providerFields)
		slices.Reverse(indexTableFields)
		slices.Reverse(tableFields)
		slices.Reverse(identifierFields)
		slices.Reverse(centroidFields)
		slices.Reverse(descriptorFields)
	}
	reverse()
	t.Cleanup(reverse)
}

// decodeResult is what Parse or ParseCentroid made of one document: the
// value, or the sorted problems.
type decodeResult struct {
	value    any
	problems []string
}

func decodeFile(t *testing.T, path string, centroid bool) decodeResult {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if centroid {
		v, err = ParseCentroid(data)
	} else {
		v, err = Parse(data)
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		var ps []string
		for _, p := range ve.Problems {
			ps = append(ps, p.Path+": "+p.Rule)
		}
		slices.Sort(ps)
		return decodeResult{problems: ps}
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return decodeResult{value: v}
}

// TestReorderedFieldsDecodeIdentically: decoding matches members by name,
// so with every object's field list reversed each testdata document,
// valid or not, gives the same value or the same problems.
func TestReorderedFieldsDecodeIdentically(t *testing.T) {
	var files []string
	for _, dir := range []string{"valid", "canonical", "invalid", "centroid/valid", "centroid/canonical", "centroid/invalid"} {
		m, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 50 {
		t.Fatalf("only %d testdata documents", len(files))
	}
	want := make([]decodeResult, len(files))
	for i, f := range files {
		want[i] = decodeFile(t, f, filepath.Base(filepath.Dir(filepath.Dir(f))) == "centroid")
	}
	reverseFields(t)
	if metadataFields[0].name == "format-version" {
		t.Fatal("field lists not reversed")
	}
	for i, f := range files {
		if got := decodeFile(t, f, filepath.Base(filepath.Dir(filepath.Dir(f))) == "centroid"); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("%s: with reversed field lists\n got %+v\nwant %+v", f, got, want[i])
		}
	}
}

// TestMemberOrder: Marshal writes every object's members in the order of
// its field list (the spec's order), so the lists are the one statement
// of it.
func TestMemberOrder(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "canonical", "base.json"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var ps problems
	root := parseTree(out, &ps)
	if root == nil {
		t.Fatal(ps.err(""))
	}
	s := root.members[slices.IndexFunc(root.members, func(m nodeMember) bool { return m.name == "snapshots" })].val.elems[0]
	get := func(n *node, name string) *node {
		t.Helper()
		i := slices.IndexFunc(n.members, func(m nodeMember) bool { return m.name == name })
		if i < 0 {
			t.Fatalf("no member %q", name)
		}
		return n.members[i].val
	}
	src := get(s, "source-table")
	checks := []struct {
		what  string
		n     *node
		names []string
	}{
		{"metadata", root, fieldNames(metadataFields)},
		{"snapshot", s, fieldNames(snapshotFields)},
		{"snapshot-log entry", get(root, "snapshot-log").elems[0], fieldNames(logEntryFields)},
		{"source-table", src, fieldNames(tableFields)},
		{"index-provider", get(s, "index-provider"), fieldNames(providerFields)},
		{"index table", get(s, "index-tables").members[0].val, fieldNames(indexTableFields)},
	}
	if id := slices.IndexFunc(src.members, func(m nodeMember) bool { return m.name == "identifier" }); id >= 0 {
		checks = append(checks, struct {
			what  string
			n     *node
			names []string
		}{"identifier", src.members[id].val, fieldNames(identifierFields)})
	}
	for _, c := range checks {
		var got []string
		for _, mem := range c.n.members {
			got = append(got, mem.name)
		}
		// Optional members Marshal leaves out are absent from got.
		want := slices.DeleteFunc(slices.Clone(c.names), func(n string) bool { return !slices.Contains(got, n) })
		if !slices.Equal(got, want) {
			t.Errorf("%s: Marshal writes %v, the field list says %v", c.what, got, want)
		}
	}
	cdata, err := os.ReadFile(filepath.Join("testdata", "centroid", "canonical", "base.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCentroid(cdata)
	if err != nil {
		t.Fatal(err)
	}
	cout, err := MarshalCentroid(c)
	if err != nil {
		t.Fatal(err)
	}
	croot := parseTree(cout, &ps)
	for _, c := range []struct {
		what  string
		n     *node
		names []string
	}{
		{"centroid metadata", croot, fieldNames(centroidFields)},
		{"descriptor", get(croot, "descriptor"), fieldNames(descriptorFields)},
	} {
		var got []string
		for _, mem := range c.n.members {
			got = append(got, mem.name)
		}
		if !slices.Equal(got, c.names) {
			t.Errorf("%s: MarshalCentroid writes %v, the field list says %v", c.what, got, c.names)
		}
	}
}

func fieldNames[T any](fields []field[T]) []string {
	var names []string
	for _, f := range fields {
		names = append(names, f.name)
	}
	return names
}
