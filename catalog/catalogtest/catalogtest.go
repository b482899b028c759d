// Package catalogtest is the conformance suite every catalog.Catalog
// implementation runs: SQLite, PostgreSQL and the warehouse catalog on a
// local folder and on an S3 server.
package catalogtest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/metadata"
)

// Run runs the suite. newCatalog must return a new, empty catalog for each
// call; Run closes it at the end of the subtest.
func Run(t *testing.T, newCatalog func(t *testing.T) catalog.Catalog) {
	tests := []struct {
		name string
		fn   func(t *testing.T, c catalog.Catalog)
	}{
		{"CreateLoad", testCreateLoad},
		{"CreateExists", testCreateExists},
		{"NotFound", testNotFound},
		{"Commit", testCommit},
		{"CommitStale", testCommitStale},
		{"CommitRace", testCommitRace},
		{"CreateRace", testCreateRace},
		{"List", testList},
		{"Drop", testDrop},
		{"DropRace", testDropRace},
		{"Names", testNames},
		{"InvalidEntry", testInvalidEntry},
		{"BindingRoundTrip", testBindingRoundTrip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCatalog(t)
			t.Cleanup(func() {
				if err := c.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tt.fn(t, c)
		})
	}
}

// Source returns a source binding for tests, distinct for each i.
func Source(i int) metadata.TableDefinition {
	return metadata.TableDefinition{
		Provider: "parquet",
		Properties: map[string]string{
			"definition-version": "1",
			"location":           fmt.Sprintf("s3://example/documents-%d/", i),
			"table-identity":     fmt.Sprintf("s3://example/documents-%d/", i),
		},
	}
}

func entry(name string, i int) catalog.Entry {
	return catalog.Entry{
		Name:             name,
		MetadataLocation: fmt.Sprintf("metadata/2f1c7f5e-3c43-4a44-8f2a-cf560c4db8d1/%020d-x.metadata.json", i),
		Source:           Source(i),
	}
}

func mustLoad(t *testing.T, c catalog.Catalog, name string) catalog.Entry {
	t.Helper()
	e, err := c.Load(context.Background(), name)
	if err != nil {
		t.Fatalf("Load(%q): %v", name, err)
	}
	return e
}

func wantEntry(t *testing.T, c catalog.Catalog, want catalog.Entry) {
	t.Helper()
	if got := mustLoad(t, c, want.Name); !reflect.DeepEqual(got, want) {
		t.Fatalf("Load(%q) = %+v, want %+v", want.Name, got, want)
	}
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want one wrapping %v", what, err, target)
	}
}

func testCreateLoad(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	e := entry("docs", 1)
	if err := c.Create(ctx, e); err != nil {
		t.Fatalf("Create: %v", err)
	}
	wantEntry(t, c, e)
	// The returned entry is the caller's: changing it changes nothing stored.
	got := mustLoad(t, c, "docs")
	got.Source.Properties["location"] = "changed"
	wantEntry(t, c, e)
}

func testCreateExists(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	e := entry("docs", 1)
	if err := c.Create(ctx, e); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "second Create", c.Create(ctx, entry("docs", 2)), catalog.ErrExists)
	wantEntry(t, c, e)
}

func testNotFound(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	_, err := c.Load(ctx, "missing")
	wantErr(t, "Load", err, catalog.ErrNotFound)
	wantErr(t, "Commit", c.Commit(ctx, entry("missing", 1).MetadataLocation, entry("missing", 2)), catalog.ErrNotFound)
	wantErr(t, "Drop", c.Drop(ctx, "missing"), catalog.ErrNotFound)
	if err := c.Create(ctx, entry("other", 1)); err != nil {
		t.Fatal(err)
	}
	_, err = c.Load(ctx, "Other") // names are case-sensitive
	wantErr(t, "Load of a differently cased name", err, catalog.ErrNotFound)
}

func testCommit(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	prev := entry("docs", 1)
	if err := c.Create(ctx, prev); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 5; i++ {
		next := entry("docs", i) // a new location and a new binding
		if err := c.Commit(ctx, prev.MetadataLocation, next); err != nil {
			t.Fatalf("Commit %d: %v", i, err)
		}
		wantEntry(t, c, next)
		prev = next
	}
	// Only the location is compared: a commit may keep the binding.
	next := entry("docs", 6)
	next.Source = prev.Source
	if err := c.Commit(ctx, prev.MetadataLocation, next); err != nil {
		t.Fatal(err)
	}
	wantEntry(t, c, next)
}

func testCommitStale(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	first, second := entry("docs", 1), entry("docs", 2)
	if err := c.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctx, first.MetadataLocation, second); err != nil {
		t.Fatal(err)
	}
	for _, expected := range []string{first.MetadataLocation, entry("docs", 9).MetadataLocation} {
		err := c.Commit(ctx, expected, entry("docs", 3))
		wantErr(t, "Commit with expected "+expected, err, catalog.ErrConflict)
		if errors.Is(err, catalog.ErrNotFound) {
			t.Fatalf("conflict also reports not found: %v", err)
		}
		wantEntry(t, c, second)
	}
	// Another index's commit does not touch this one.
	if err := c.Create(ctx, entry("other", 1)); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctx, entry("other", 1).MetadataLocation, entry("other", 4)); err != nil {
		t.Fatal(err)
	}
	wantEntry(t, c, second)
}

// testCommitRace: of many Commits from one expected location, exactly one wins.
func testCommitRace(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	base := entry("docs", 0)
	if err := c.Create(ctx, base); err != nil {
		t.Fatal(err)
	}
	const writers = 16
	for round := range 3 {
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() { errs[w] = c.Commit(ctx, base.MetadataLocation, entry("docs", 1000*(round+1)+w)) })
		}
		wg.Wait()
		winner := -1
		for w, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: writers %d and %d both won", round, winner, w)
			case err == nil:
				winner = w
			case !errors.Is(err, catalog.ErrConflict):
				t.Fatalf("round %d: writer %d: %v, want a conflict", round, w, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won", round)
		}
		base = entry("docs", 1000*(round+1)+winner)
		wantEntry(t, c, base)
	}
}

func testCreateRace(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	const writers = 8
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() { errs[w] = c.Create(ctx, entry("docs", w)) })
	}
	wg.Wait()
	winner := -1
	for w, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both created the index", winner, w)
		case err == nil:
			winner = w
		case !errors.Is(err, catalog.ErrExists):
			t.Fatalf("writer %d: %v, want ErrExists", w, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer created the index")
	}
	wantEntry(t, c, entry("docs", winner))
}

func testList(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	list := func() []string {
		t.Helper()
		names, err := c.List(ctx)
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		return names
	}
	if got := list(); len(got) != 0 {
		t.Fatalf("List of an empty catalog = %q", got)
	}
	// Byte order: upper case before '_' before lower case.
	in := []string{"zeta", "Alpha", "alpha", "a.b", "a-b", "a_b", "b9", "B1", "_x", "0"}
	for i, n := range in {
		if err := c.Create(ctx, entry(n, i)); err != nil {
			t.Fatalf("Create %q: %v", n, err)
		}
	}
	want := slices.Clone(in)
	slices.Sort(want)
	if got := list(); !slices.Equal(got, want) {
		t.Fatalf("List = %q, want %q", got, want)
	}
	if err := c.Drop(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	want = slices.DeleteFunc(want, func(s string) bool { return s == "alpha" })
	if got := list(); !slices.Equal(got, want) {
		t.Fatalf("List after Drop = %q, want %q", got, want)
	}
}

func testDrop(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	e := entry("docs", 1)
	if err := c.Create(ctx, e); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, entry("kept", 1)); err != nil {
		t.Fatal(err)
	}
	if err := c.Drop(ctx, "docs"); err != nil {
		t.Fatalf("Drop: %v", err)
	}
	_, err := c.Load(ctx, "docs")
	wantErr(t, "Load after Drop", err, catalog.ErrNotFound)
	wantErr(t, "Commit after Drop", c.Commit(ctx, e.MetadataLocation, entry("docs", 2)), catalog.ErrNotFound)
	wantErr(t, "second Drop", c.Drop(ctx, "docs"), catalog.ErrNotFound)
	wantEntry(t, c, entry("kept", 1))
	// A dropped name can be created again, with a fresh entry.
	again := entry("docs", 7)
	if err := c.Create(ctx, again); err != nil {
		t.Fatalf("Create after Drop: %v", err)
	}
	wantEntry(t, c, again)
	wantErr(t, "Commit on the old location", c.Commit(ctx, e.MetadataLocation, entry("docs", 8)), catalog.ErrConflict)
	if err := c.Commit(ctx, again.MetadataLocation, entry("docs", 8)); err != nil {
		t.Fatalf("Commit after re-create: %v", err)
	}
	wantEntry(t, c, entry("docs", 8))
}

func testDropRace(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	if err := c.Create(ctx, entry("docs", 1)); err != nil {
		t.Fatal(err)
	}
	const writers = 8
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() { errs[w] = c.Drop(ctx, "docs") })
	}
	wg.Wait()
	ok := 0
	for w, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, catalog.ErrNotFound):
			t.Fatalf("writer %d: %v, want ErrNotFound", w, err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d Drops succeeded, want exactly 1", ok)
	}
	_, err := c.Load(ctx, "docs")
	wantErr(t, "Load after Drop", err, catalog.ErrNotFound)
}

// Names holds the index-name cases every catalog and CheckName agree on.
var Names = []struct {
	Name  string
	Valid bool
}{
	{"a", true},
	{"docs", true},
	{"Docs_2024.v1-final", true},
	{"_private", true},
	{"0", true},
	{"a..b", true},
	{"x" + strings.Repeat("y", 127), true},
	{"", false},
	{"x" + strings.Repeat("y", 128), false},
	{".hidden", false},
	{"..", false},
	{".", false},
	{"-flag", false},
	{"a/b", false},
	{"a b", false},
	{"a:b", false},
	{"a\\b", false},
	{"é", false},
	{"a\x00", false},
	{"a\n", false},
	{"a*", false},
	{"a'b", false},
	{"a%2Fb", false},
}

func testNames(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	for i, tc := range Names {
		e := entry(tc.Name, i)
		err := c.Create(ctx, e)
		if !tc.Valid {
			wantErr(t, fmt.Sprintf("Create(%q)", tc.Name), err, catalog.ErrInvalidName)
			_, err = c.Load(ctx, tc.Name)
			wantErr(t, fmt.Sprintf("Load(%q)", tc.Name), err, catalog.ErrInvalidName)
			wantErr(t, fmt.Sprintf("Drop(%q)", tc.Name), c.Drop(ctx, tc.Name), catalog.ErrInvalidName)
			wantErr(t, fmt.Sprintf("Commit(%q)", tc.Name), c.Commit(ctx, e.MetadataLocation, e), catalog.ErrInvalidName)
			continue
		}
		if err != nil {
			t.Fatalf("Create(%q): %v", tc.Name, err)
		}
		wantEntry(t, c, e)
	}
	names, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, tc := range Names {
		if tc.Valid {
			want = append(want, tc.Name)
		}
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("List = %q, want %q", names, want)
	}
}

func testInvalidEntry(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	good := entry("docs", 1)
	for _, loc := range []string{"", "/abs/metadata.json", "s3://bucket/m.json", "metadata/../x.json", "metadata//x.json"} {
		e := good
		e.MetadataLocation = loc
		if err := c.Create(ctx, e); err == nil {
			t.Fatalf("Create with metadata location %q succeeded", loc)
		}
	}
	noProvider := good
	noProvider.Source.Provider = ""
	if err := c.Create(ctx, noProvider); err == nil {
		t.Fatal("Create with a binding without provider succeeded")
	}
	_, err := c.Load(ctx, "docs")
	wantErr(t, "Load after refused Creates", err, catalog.ErrNotFound)
	if err := c.Create(ctx, good); err != nil {
		t.Fatal(err)
	}
	bad := entry("docs", 2)
	bad.MetadataLocation = "/abs/metadata.json"
	if err := c.Commit(ctx, good.MetadataLocation, bad); err == nil {
		t.Fatal("Commit to an absolute location succeeded")
	}
	wantEntry(t, c, good)
}

func testBindingRoundTrip(t *testing.T, c catalog.Catalog) {
	ctx := context.Background()
	sources := []metadata.TableDefinition{
		{Provider: "parquet", Properties: map[string]string{}},
		{Provider: "parquet", Properties: nil},
		{
			Identifier: &metadata.TableIdentifier{Catalog: "datafusion", Namespace: []string{"public", "ns2"}, Name: "documents"},
			Provider:   "parquet",
			Properties: map[string]string{
				"location": "s3://example/documents/", "table-identity": "s3://example/documents/@v=3",
				"quote\"back\\slash": "<tag> & ünïcödé \u2028 \x01", "": "empty key",
			},
		},
		{Identifier: &metadata.TableIdentifier{Namespace: []string{}}, Provider: "x"},
		{Identifier: &metadata.TableIdentifier{Name: "n"}, Provider: "x"},
	}
	prev := ""
	for i, src := range sources {
		e := entry("docs", i)
		e.Source = src
		var err error
		if i == 0 {
			err = c.Create(ctx, e)
		} else {
			err = c.Commit(ctx, prev, e)
		}
		if err != nil {
			t.Fatalf("source %d: %v", i, err)
		}
		wantEntry(t, c, e)
		prev = e.MetadataLocation
	}
}
