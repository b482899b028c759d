package postings

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// badManifests maps each testdata/manifest/bad-*.json file to a fragment
// of the error it must produce: one file per rule of the profile.
var badManifests = map[string]string{
	"bad-version":         "manifest-version",
	"bad-encoding":        "posting encoding",
	"bad-dimension":       "dimension",
	"bad-nlist":           "nlist",
	"bad-key-type":        "key-types[0]",
	"bad-no-keys":         "no source-key field",
	"bad-rows-total":      "manifest rows",
	"bad-cids-total":      "manifest cids",
	"bad-no-files":        "no files",
	"bad-path-dotdot":     "files[1].path",
	"bad-path-ext":        "not a .parquet file",
	"bad-path-dup":        "duplicate path",
	"bad-file-size":       "files[1].size",
	"bad-bucket":          "files[1].bucket",
	"bad-file-rows":       "files[1].rows",
	"bad-file-row-groups": "1 row groups listed, file has 2",
	"bad-cid-range":       "cid 8 out of range",
	"bad-file-index":      "file 2 out of range",
	"bad-rowgroup-index":  "row group 3 out of range",
	"bad-range-magic":     "outside the data",
	"bad-range-footer":    "outside the data",
	"bad-range-empty":     "outside the data",
	"bad-range-overlap":   "overlaps",
	"bad-rows-zero":       "rows 0 not positive",
	"bad-rows-fit":        "cannot fit",
	"bad-order":           "order",
	"bad-file-cid-order":  "cids not ascending",
	"bad-crc-range":       "crc32c",
	"bad-rowgroup-short":  "6 elements, want 7",
	"bad-rowgroup-long":   "more than 7 elements",
	"bad-json-float":      "not an integer",
	"bad-json-exp":        "not an integer",
	"bad-json-string-int": "want an integer",
	"bad-json-null":       "want an integer",
	"bad-json-dup":        "duplicate",
	"bad-json-unknown":    "unknown member \"extra\"",
	"bad-json-missing":    "missing member \"cids\"",
	"bad-json-trailing":   "manifest",
	"bad-json-truncated":  "manifest",
	"bad-json-utf8":       "UTF-8",
	"bad-json-negative":   "out of range",
	"bad-file-unknown":    "unknown member \"x\"",
	"bad-file-missing":    "missing member \"bucket\"",
	"bad-keyrows-v1":      "key-rows: not allowed in manifest-version 1",
	"bad-keyrows-missing": "missing member \"key-rows\"",
	"bad-keyrows-rows":    "key-rows.rows",
	"bad-keyrows-path":    "key-rows.path",
	"bad-keyrows-size":    "key-rows.size",
	"bad-keyrows-unknown": "unknown member \"x\"",
}

func TestParseManifestValid(t *testing.T) {
	data, err := os.ReadFile("testdata/manifest/valid.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows != 10 || m.CIDs != 3 || len(m.Files) != 2 || len(m.RowGroups) != 4 {
		t.Fatalf("parsed %+v", m)
	}
	if got := m.Ranges(0); len(got) != 2 || got[0].RowGroup != 0 || got[1].RowGroup != 1 || got[1].CRC32C != 2 {
		t.Fatalf("Ranges(0) = %+v", got)
	}
	if got := m.Ranges(1); got != nil {
		t.Fatalf("Ranges(1) = %+v, want nil", got)
	}
	if got := m.Ranges(5); len(got) != 1 || got[0].File != 1 {
		t.Fatalf("Ranges(5) = %+v", got)
	}
	out, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(data) {
		t.Fatalf("Marshal is not canonical:\n%s\nwant\n%s", out, data)
	}
	m2, err := ParseManifest(out)
	if err != nil || !reflect.DeepEqual(m, m2) {
		t.Fatalf("round trip: %v\n%+v\n%+v", err, m, m2)
	}
	if err := m.CheckRoots([]int32{0, 3, 8}); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckRoots([]int32{0, 2, 8}); err == nil || !strings.Contains(err.Error(), "outside bucket 0") {
		t.Fatalf("CheckRoots with cid 2 outside bucket 0: %v", err)
	}
	if err := m.CheckRoots([]int32{0, 3, 9}); err == nil {
		t.Fatal("CheckRoots with 9 leaves for nlist 8 passed")
	}
	if err := m.CheckLocation("indexes/2f1c7f5e3c434a448f2acf560c4db8d1/702-00000000000000aa/ivf_postings/"); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckLocation("indexes/2f1c7f5e3c434a448f2acf560c4db8d2/701-00000000000000aa/ivf_postings/"); err == nil {
		t.Fatal("CheckLocation accepted files of another index")
	}
	if err := m.CheckSchema(Schema{Encoding: EncodingLVQ8, Dim: 4, Keys: []KeyType{{Name: "id", Kind: KindInt64}}}); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckSchema(Schema{Encoding: EncodingLVQ8, Dim: 4, Keys: []KeyType{{Name: "id", Kind: KindInt32}}}); err == nil {
		t.Fatal("CheckSchema accepted int for long")
	}
}

func TestParseManifestInvalid(t *testing.T) {
	files, err := filepath.Glob("testdata/manifest/bad-*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(badManifests) {
		t.Fatalf("%d bad-*.json files, %d expectations", len(files), len(badManifests))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			want, ok := badManifests[name]
			if !ok {
				t.Fatalf("no expectation for %s", f)
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m, err := ParseManifest(data)
			if err == nil {
				t.Fatalf("parsed %+v", m)
			}
			if !errors.Is(err, ErrManifest) {
				t.Fatalf("error %v does not wrap ErrManifest", err)
			}
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not mention %q", err, want)
			}
		})
	}
}

func FuzzParseManifest(f *testing.F) {
	files, _ := filepath.Glob("testdata/manifest/*.json")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			return
		}
		out, err := m.Marshal()
		if err != nil {
			t.Fatalf("valid manifest does not marshal: %v", err)
		}
		m2, err := ParseManifest(out)
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("marshal round trip: %v", err)
		}
		for _, r := range m.RowGroups {
			_ = m.Ranges(r.CID)
		}
	})
}

// TestManifestCIDAcrossFiles: a CID with row groups in two files (as after
// an incremental refresh appends a file) is found in both, in file order.
func TestManifestCIDAcrossFiles(t *testing.T) {
	s := Schema{Encoding: EncodingLVQ8, Dim: 6, Keys: []KeyType{{Name: "id", Kind: KindInt64}}}
	rows := testRows(t, s, map[int32]int{1: 5, 2: 3}, 4)
	dataA, a := writeBucket(t, s, 0, map[int32][]Row{1: rows[1][:3], 2: rows[2]}, WriterOptions{})
	dataB, b := writeBucket(t, s, 0, map[int32][]Row{1: rows[1][3:]}, WriterOptions{})
	a.Path = "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/701-00000000000000aa/ivf_postings/bucket-000000-000.parquet"
	b.Path = "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/702-00000000000000aa/ivf_postings/bucket-000000-000.parquet"
	m, err := NewManifest(s, 3, []FileEntry{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckLocation("indexes/2f1c7f5e3c434a448f2acf560c4db8d1/702-00000000000000aa/ivf_postings/"); err != nil {
		t.Fatal(err)
	}
	data, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	m, err = ParseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	rs := m.Ranges(1)
	if len(rs) != 2 || rs[0].File != 0 || rs[1].File != 1 {
		t.Fatalf("Ranges(1) = %+v", rs)
	}
	var batch Batch
	for _, r := range rs {
		src := [][]byte{dataA, dataB}[r.File]
		if err := DecodeRowGroup(s, src[r.Offset:r.Offset+r.Length], r, &batch); err != nil {
			t.Fatal(err)
		}
	}
	for i, w := range rows[1] {
		if !rowsEqual(batch.Row(i), w) {
			t.Fatalf("row %d differs", i)
		}
	}
	if m.Rows != 8 || m.CIDs != 2 {
		t.Fatalf("rows %d cids %d", m.Rows, m.CIDs)
	}
}

// TestParseManifestKeyRows: a version-2 manifest lists the key-rows
// table; it marshals back byte for byte, and dropping the table gives
// version 1 again (what releases before it wrote).
func TestParseManifestKeyRows(t *testing.T) {
	data, err := os.ReadFile("testdata/manifest/valid-v2.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	want := KeyRowsEntry{Path: "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/701/ivf_postings/" + KeyRowsName, Size: 400, Rows: 10}
	if m.KeyRows == nil || *m.KeyRows != want {
		t.Fatalf("key-rows %+v, want %+v", m.KeyRows, want)
	}
	if err := m.CheckLocation("indexes/2f1c7f5e3c434a448f2acf560c4db8d1/701-00000000000000aa/ivf_postings/"); err != nil {
		t.Fatal(err)
	}
	out, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(out)) != strings.TrimSpace(string(data)) {
		t.Fatalf("Marshal:\n%s\nwant:\n%s", out, data)
	}
	v1, err := os.ReadFile("testdata/manifest/valid.json")
	if err != nil {
		t.Fatal(err)
	}
	c := *m
	c.KeyRows = nil
	if out, err = c.Marshal(); err != nil || strings.TrimSpace(string(out)) != strings.TrimSpace(string(v1)) {
		t.Fatalf("without key-rows: %v\n%s\nwant:\n%s", err, out, v1)
	}
	if _, err := c.WithKeyRows(KeyRowsEntry{Path: want.Path, Size: 400, Rows: 11}); err == nil {
		t.Fatal("WithKeyRows accepted 11 rows for a 10-row manifest")
	}
	// A key-rows table of another index is refused like a postings file.
	other := *m
	other.KeyRows = &KeyRowsEntry{Path: "indexes/00000000000000000000000000000000/1/ivf_postings/" + KeyRowsName, Size: 400, Rows: 10}
	if err := other.CheckLocation("indexes/2f1c7f5e3c434a448f2acf560c4db8d1/701-00000000000000aa/ivf_postings/"); err == nil {
		t.Fatal("CheckLocation accepted a key-rows table of another index")
	}
}
