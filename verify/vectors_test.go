package verify

import (
	"bytes"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/vecfile"
)

// TestVectorsFileDamage: every way a vectors file can be wrong fails the
// vectors file check (and only it), naming the file; an index without one
// skips the check.
func TestVectorsFileDamage(t *testing.T) {
	f := newFixture(t)
	f.writePart(t, "part-0.parquet", 0, 1200, testDim, 1)
	f.create(t, "idx", indexer.Options{NList: 20, VectorsFile: true})
	f.create(t, "other", indexer.Options{NList: 20, VectorsFile: true, Encoding: metadata.EncodingLVQ4})
	f.create(t, "none", indexer.Options{NList: 20})
	loc := func(name string) string {
		_, s, _ := f.current(t, name)
		return vecfile.Location(postings.SnapshotLayout(s).Meta)
	}
	key := loc("idx")
	good := f.read(t, key)
	_, _, man := f.current(t, "idx")
	manRaw := f.read(t, strings.TrimSuffix(key, vecfile.Name)+postings.ManifestName)

	// Rows 0 and 1 swapped, rewritten with a valid footer and checksum.
	swapped := func() []byte {
		fl, err := vecfile.Open(bytes.NewReader(good), int64(len(good)), key)
		if err != nil {
			t.Fatal(err)
		}
		rows := make([]float32, man.Rows*int64(testDim))
		if err := fl.ReadRows(rows, 0); err != nil {
			t.Fatal(err)
		}
		a, b := rows[:testDim], rows[testDim:2*testDim]
		for i := range a {
			a[i], b[i] = b[i], a[i]
		}
		var buf bytes.Buffer
		w := vecfile.NewWriter(&buf, testDim, man.Rows, vecfile.ManifestHash(manRaw))
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}()
	dataFlip := bytes.Clone(good)
	dataFlip[100] ^= 4

	rep := f.verify(t, "none", Options{})
	if c, _ := rep.Check(CheckVectorsFile); c.Status != StatusSkipped {
		t.Fatalf("index without a vectors file: check %s %s", c.Status, c.Detail)
	}
	requireOK(t, f.verify(t, "idx", Options{}))
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", good[:len(good)-8], "vectors-file footer"},
		{"data bit flip", dataFlip, "data checksum"},
		{"foreign", f.read(t, loc("other")), "another manifest"},
		{"rows swapped", swapped, "not the source vectors in postings order"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.overwrite(t, key, tc.data)
			defer f.overwrite(t, key, good)
			rep := f.verify(t, "idx", Options{})
			for _, c := range rep.Checks {
				if c.Name != CheckVectorsFile && c.Status == StatusFail {
					t.Errorf("check %s failed: %s", c.Name, c.Detail)
				}
			}
			requireFail(t, rep, map[string]string{CheckVectorsFile: tc.want})
			if c, _ := rep.Check(CheckVectorsFile); !strings.Contains(c.Detail, key) {
				t.Errorf("detail does not name %s: %s", key, c.Detail)
			}
		})
	}
}
