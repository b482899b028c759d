package postings

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/version"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenFile writes the golden lvq8 bucket file: cid 2 with 3 rows, long key.
// The golden file records a fixed version in created_by, so that it does
// not depend on how the test binary was built.
func goldenFile(t *testing.T) (Schema, []byte, []byte, map[int32][]Row) {
	old := version.Version
	version.Version = "1" // the stored files say "parqdb version 1 (build profile-1)"
	defer func() { version.Version = old }()
	s := Schema{Encoding: EncodingLVQ8, Dim: 4, Keys: []KeyType{{Name: "id", Kind: KindInt64}}}
	rows := testRows(t, s, map[int32]int{2: 3, 3: 2}, 42)
	data, fe := writeBucket(t, s, 1, rows, WriterOptions{})
	fe.Path = "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/701-00000000000000aa/ivf_postings/" + BucketFileName(1, 0)
	m, err := NewManifest(s, 4, []FileEntry{fe})
	if err != nil {
		t.Fatal(err)
	}
	man, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return s, data, man, rows
}

// TestGolden checks that the writer is deterministic and that files of the
// stored format (testdata/golden-*) still read: regenerate with -update
// only for an intended format change (and record it in the profile).
func TestGolden(t *testing.T) {
	s, data, man, rows := goldenFile(t)
	m, err := ParseManifest(man)
	if err != nil {
		t.Fatal(err)
	}
	rg := m.Ranges(2)[0]
	if *update {
		for name, b := range map[string][]byte{
			"testdata/golden-bucket-lvq8-long.parquet": data,
			"testdata/golden-manifest.json":            man,
			"testdata/rowgroup-lvq8-long.bin":          data[rg.Offset : rg.Offset+rg.Length],
		} {
			if err := os.WriteFile(name, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	storedData, err := os.ReadFile("testdata/golden-bucket-lvq8-long.parquet")
	if err != nil {
		t.Fatal(err)
	}
	storedMan, err := os.ReadFile("testdata/golden-manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(storedData, data) || !bytes.Equal(storedMan, man) {
		t.Fatal("writer output differs from the golden files: the format changed or the writer is not deterministic")
	}
	sm, err := ParseManifest(storedMan)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyFile(bytes.NewReader(storedData), int64(len(storedData)), sm, 0); err != nil {
		t.Fatal(err)
	}
	var b Batch
	for _, r := range sm.Ranges(2) {
		if err := DecodeRowGroup(s, storedData[r.Offset:r.Offset+r.Length], r, &b); err != nil {
			t.Fatal(err)
		}
	}
	for i, w := range rows[2] {
		if !rowsEqual(b.Row(i), w) {
			t.Fatalf("row %d differs", i)
		}
	}
}

// TestProfileExample keeps the manifest example in the profile document
// equal to the golden manifest.
func TestProfileExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/parquet-provider-profile.md")
	if err != nil {
		t.Fatal(err)
	}
	man, err := os.ReadFile("testdata/golden-manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, man) {
		t.Fatal("docs/parquet-provider-profile.md §9.1 example differs from testdata/golden-manifest.json")
	}
}

// TestCreatedByVersion: every index file records the running build's
// version in created_by (it used to say "parqdb version 1 (build
// profile-1)" whatever the build).
func TestCreatedByVersion(t *testing.T) {
	old := version.Version
	version.Version = "v1.2.3-test"
	defer func() { version.Version = old }()
	s := Schema{Encoding: EncodingLVQ8, Dim: 4, Keys: []KeyType{{Name: "id", Kind: KindInt64}}}
	data, _ := writeBucket(t, s, 1, testRows(t, s, map[int32]int{2: 3}, 42), WriterOptions{})
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	want := "parqdb version v1.2.3-test (build profile-1)"
	if got := pf.Metadata().CreatedBy; got != want || got != version.CreatedBy(Profile) {
		t.Fatalf("created_by %q, want %q", got, want)
	}
}
