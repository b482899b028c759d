package metadata

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// addSeeds adds every testdata JSON document (valid, invalid and canonical,
// index and centroid metadata) to the fuzz corpus.
func addSeeds(f *testing.F) {
	err := filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil {
			f.Add(b)
		}
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
}

// FuzzParse checks that Parse never panics and that every accepted
// document validates, writes, parses again and writes the same bytes.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			if _, ok := err.(*ValidationError); !ok {
				t.Fatalf("error %T is not a *ValidationError", err)
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("accepted document does not validate: %v", err)
		}
		out, err := Marshal(m)
		if err != nil {
			t.Fatalf("accepted document cannot be written: %v", err)
		}
		m2, err := Parse(out)
		if err != nil {
			t.Fatalf("canonical form rejected: %v\n%s", err, out)
		}
		out2, err := Marshal(m2)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("round trip differs (%v):\n%s\n---\n%s", err, out, out2)
		}
	})
}

// FuzzParseCentroid is FuzzParse for centroid metadata documents.
func FuzzParseCentroid(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCentroid(data)
		if err != nil {
			return
		}
		out, err := MarshalCentroid(c)
		if err != nil {
			t.Fatalf("accepted document cannot be written: %v", err)
		}
		c2, err := ParseCentroid(out)
		if err != nil {
			t.Fatalf("canonical form rejected: %v\n%s", err, out)
		}
		if *c2 != *c {
			t.Fatalf("round trip changed the value: %+v vs %+v", c, c2)
		}
		out2, _ := MarshalCentroid(c2)
		if !bytes.Equal(out, out2) {
			t.Fatalf("round trip differs")
		}
	})
}

// FuzzFingerprintName checks that the UUID name is compact JSON that
// decodes to the descriptor and uses only the mandatory escapes.
func FuzzFingerprintName(f *testing.F) {
	f.Add("embedding", int32(768), "l2_squared", int32(4096), int32(1))
	f.Add("a\"b\\c\n\x00<>&\u2028\u2029é😀", int32(-1), "cosine", int32(0), int32(2))
	f.Fuzz(func(t *testing.T, field string, dim int32, metric string, nlist, profile int32) {
		if !utf8.ValidString(field) || !utf8.ValidString(metric) {
			return // Validate rejects such descriptors
		}
		d := Descriptor{field, dim, metric, nlist, profile}
		name := FingerprintName(d)
		var got struct {
			VectorField string `json:"vector-field"`
			Dimension   int32  `json:"dimension"`
			Metric      string `json:"metric"`
			NList       int32  `json:"nlist"`
			Profile     int32  `json:"clustering-profile-version"`
		}
		if err := json.Unmarshal(name, &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if (Descriptor{got.VectorField, got.Dimension, got.Metric, got.NList, got.Profile}) != d {
			t.Fatalf("%s decodes to %+v", name, got)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, name); err != nil || !bytes.Equal(compact.Bytes(), name) {
			t.Fatalf("%s is not compact", name)
		}
		// Only control characters are \u-escaped, and never in upper case.
		for i := 0; i+5 < len(name); i++ {
			if name[i] == '\\' {
				if name[i+1] == 'u' && (string(name[i+2:i+4]) != "00" || name[i+4] > '1' || bytes.ContainsAny(name[i+2:i+6], "ABCDEF")) {
					t.Fatalf("%s: needless escape at %d", name, i)
				}
				i++ // skip the escaped character
			}
		}
		if fp := Fingerprint(d); fp != Fingerprint(d) || len(fp) != 36 {
			t.Fatal("fingerprint unstable")
		}
	})
}
