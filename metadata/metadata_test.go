package metadata

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

func readFile(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustParse(t *testing.T, file string) *Metadata {
	t.Helper()
	m, err := ParseFile(file, readFile(t, file))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSpecExample(t *testing.T) {
	// The spec's example validates although its fingerprint is illustrative
	// (clarification 7): snapshot validation never recomputes it.
	m := mustParse(t, "testdata/valid/spec-example.json")
	s := m.CurrentSnapshot()
	if s == nil || s.SnapshotID != 701 {
		t.Fatalf("current snapshot = %+v", s)
	}
	d := Descriptor{VectorField: "embedding", Dimension: 768, Metric: MetricL2Squared, NList: 4096, ClusteringProfileVersion: 1}
	if got := s.Parameters[ParamFingerprint]; got == Fingerprint(d) {
		t.Fatalf("the example fingerprint was expected to be illustrative, but equals Fingerprint(descriptor)")
	}
	if s.SourceTable.Identifier == nil || s.SourceTable.Identifier.Catalog != "datafusion" ||
		len(s.SourceTable.Identifier.Namespace) != 1 || s.SourceTable.Identifier.Name != "documents" {
		t.Errorf("identifier = %+v", s.SourceTable.Identifier)
	}
	p, err := s.IVF()
	if err != nil {
		t.Fatal(err)
	}
	want := IVFParams{768, 4096, 1000000, EncodingLVQ8, "3ad6988a-389e-53de-aaa6-f210345fd894",
		"fe985f6d-3592-4385-a1ca-71347057a210", "metadata/fe985f6d-3592-4385-a1ca-71347057a210/v1.metadata.json"}
	if p != want {
		t.Errorf("IVF() = %+v, want %+v", p, want)
	}
	if loc, ok := s.TableLocation(RolePostings); !ok || loc != "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/701/ivf_postings/" {
		t.Errorf("TableLocation(postings) = %q, %v", loc, ok)
	}
}

func TestPropertiesAbsentVsEmpty(t *testing.T) {
	for _, tc := range []struct {
		file    string
		present bool
	}{
		{"testdata/valid/minimal.json", false},
		{"testdata/valid/properties-empty.json", true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			m := mustParse(t, tc.file)
			if (m.Properties != nil) != tc.present {
				t.Fatalf("Properties = %#v, want present=%v", m.Properties, tc.present)
			}
			out, err := Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.Contains(out, []byte(`"properties": {}`+"\n}")); got != tc.present {
				t.Fatalf("root properties written=%v, want %v:\n%s", got, tc.present, out)
			}
		})
	}
}

func TestInt64Exact(t *testing.T) {
	m := mustParse(t, "testdata/valid/int64-limits.json")
	const max = int64(9223372036854775807)
	s := m.Snapshots[0]
	for name, v := range map[string]int64{
		"last-updated-ms": m.LastUpdatedMs, "last-sequence-number": m.LastSequenceNumber,
		"current-snapshot-id": m.CurrentSnapshotID, "snapshot-id": s.SnapshotID,
		"sequence-number": s.SequenceNumber, "timestamp-ms": s.TimestampMs, "indexed-rows": s.IndexedRows,
	} {
		if v != max {
			t.Errorf("%s = %d, want %d", name, v, max)
		}
	}
	if s.IndexTables[RoleCentroids].DefinitionVersion != 2147483647 {
		t.Errorf("definition-version = %d", s.IndexTables[RoleCentroids].DefinitionVersion)
	}
	out, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"indexed-rows": 9223372036854775807,`)) {
		t.Errorf("int64 max not written exactly:\n%s", out)
	}
	// The successor of a document at the limits cannot allocate an id.
	if _, err := Successor(m, s, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("Successor at int64 max: err = %v, want ErrInvalid", err)
	}
}

func TestNegativeZeroIsZero(t *testing.T) {
	// -0 is an RFC 8259 integer literal; it reads as 0 and is written as 0.
	data := bytes.Replace(readFile(t, "testdata/valid/minimal.json"), []byte(`"last-updated-ms":0`), []byte(`"last-updated-ms":-0`), 1)
	m, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := Marshal(m)
	if !bytes.Contains(out, []byte(`"last-updated-ms": 0,`)) {
		t.Errorf("got:\n%s", out)
	}
}

func TestUnicodeRoundTrip(t *testing.T) {
	m := mustParse(t, "testdata/valid/unicode.json")
	s := m.Snapshots[0]
	want := map[string]string{
		"quote\"backslash\\": "tab\tnewline\ncr\rbs\bff\fnul\x00us\x1fdel\x7f",
		"html":               `<a href="x">&amp;</a>`,
		"ls-ps":              "\u2028\u2029",
		"non-ascii":          "ümlaut 日本語 😀 😀",
		"escaped-ascii":      "A//",
		"a.b":                "dotted key",
		"":                   "empty key",
		"[0]":                "bracket key",
	}
	for k, v := range want {
		if s.Summary[k] != v {
			t.Errorf("summary[%q] = %q, want %q", k, s.Summary[k], v)
		}
	}
	out, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, frag := range []string{
		`"quote\"backslash\\": "tab\tnewline\ncr\rbs\bff\fnul\u0000us\u001fdel` + "\x7f" + `"`,
		`"html": "<a href=\"x\">&amp;</a>"`,
		`"ls-ps": "` + "\u2028\u2029" + `"`,
		`"non-ascii": "ümlaut 日本語 😀 😀"`,
		`"escaped-ascii": "A//"`,
		`"vector-field": "向量"`,
	} {
		if !bytes.Contains(out, []byte(frag)) {
			t.Errorf("canonical output lacks %s", frag)
		}
	}
	// Source-table properties may hold locations outside the warehouse.
	if s.SourceTable.Properties["path"] != "/abs/outside/the/warehouse" {
		t.Errorf("source-table properties = %v", s.SourceTable.Properties)
	}
}

func TestErrorShape(t *testing.T) {
	data := readFile(t, "testdata/invalid/nlist-above-ntotal.json")
	_, err := ParseFile("idx/v3.metadata.json", data)
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("errors.Is(err, ErrInvalid) = false for %v", err)
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatal("not a *ValidationError")
	}
	want := "idx/v3.metadata.json: snapshots[0].parameters.nlist: nlist 5001 exceeds ntotal 5000"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if _, err := Parse(data); err == nil || strings.HasPrefix(err.Error(), ":") {
		t.Errorf("Parse error = %q, want no file prefix", err)
	}
}

func TestEveryProblemReported(t *testing.T) {
	base := string(readFile(t, "testdata/valid/base.json"))
	t.Run("structure", func(t *testing.T) {
		doc := strings.NewReplacer(
			`"format-version": 1,`, `"format-version": "1",`,
			`"snapshot-id": 4,`, `"snapshot-id": 4, "x": 1,`,
			`"operation": "create"`, `"operation": null`,
			`"owner": "search-team"`, `"owner": "search-team", "owner": "again"`,
		).Replace(base)
		_, err := Parse([]byte(doc))
		ve := asValidationError(t, err)
		// The duplicate key is a syntax-phase problem: it alone is reported.
		if len(ve.Problems) != 1 || ve.Problems[0].Path != "properties.owner" {
			t.Fatalf("got %v", err)
		}
		doc = strings.Replace(doc, `, "owner": "again"`, "", 1)
		_, err = Parse([]byte(doc))
		ve = asValidationError(t, err)
		paths := problemPaths(ve)
		for _, p := range []string{"format-version", "snapshots[0].x", "snapshots[0].summary.operation"} {
			if !paths[p] {
				t.Errorf("missing problem at %s in %v", p, err)
			}
		}
	})
	t.Run("semantics", func(t *testing.T) {
		doc := strings.NewReplacer(
			`"format-version": 1,`, `"format-version": 3,`,
			`"nlist": "32"`, `"nlist": "032"`,
			`"metric": "cosine"`, `"metric": "dot"`,
			`"definition-version": 2,`, `"definition-version": -2,`,
		).Replace(base)
		_, err := Parse([]byte(doc))
		ve := asValidationError(t, err)
		paths := problemPaths(ve)
		for _, p := range []string{"format-version", "snapshots[1].parameters.nlist", "snapshots[0].metric", "snapshots[1].metric", "snapshots[1].index-tables.ivf_postings.definition-version"} {
			if !paths[p] {
				t.Errorf("missing problem at %s in %v", p, err)
			}
		}
	})
}

func problemPaths(ve *ValidationError) map[string]bool {
	m := map[string]bool{}
	for _, p := range ve.Problems {
		m[p.Path] = true
	}
	return m
}

func TestValidateGoValues(t *testing.T) {
	m := mustParse(t, "testdata/valid/minimal.json")
	t.Run("nil maps write as empty", func(t *testing.T) {
		c := m.Clone()
		c.Snapshots[0].Summary = nil
		c.Snapshots[0].IndexProvider.Properties = nil
		out, err := Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(out, []byte(`"summary": {},`)) {
			t.Errorf("nil summary not written as {}:\n%s", out)
		}
		if _, err := Parse(out); err != nil {
			t.Fatal(err)
		}
	})
	for _, tc := range []struct {
		name string
		edit func(*Metadata)
		path string
	}{
		{"invalid UTF-8 value", func(m *Metadata) { m.Snapshots[0].Summary = map[string]string{"k": "\xff"} }, "snapshots[0].summary.k"},
		{"invalid UTF-8 key", func(m *Metadata) { m.Properties = map[string]string{"\xff": "v"} }, "properties[\"\uFFFD\"]"},
		{"invalid UTF-8 vector field", func(m *Metadata) { m.Snapshots[0].VectorField = "\xfe" }, "snapshots[0].vector-field"},
		{"empty identifier name", func(m *Metadata) { m.Snapshots[0].SourceTable.Identifier = &TableIdentifier{Catalog: "c"} }, "snapshots[0].source-table.identifier.name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := m.Clone()
			tc.edit(c)
			err := c.Validate()
			if err == nil {
				t.Fatal("accepted")
			}
			if _, merr := Marshal(c); !errors.Is(merr, ErrInvalid) {
				t.Errorf("Marshal of invalid metadata: %v", merr)
			}
			ve := asValidationError(t, err)
			if !problemPaths(ve)[tc.path] {
				t.Errorf("no problem at %s: %v", tc.path, err)
			}
		})
	}
}

func TestJSONPathNotation(t *testing.T) {
	for _, tc := range []struct{ path, name, want string }{
		{"", "format-version", "format-version"},
		{"snapshots[1].parameters", "nlist", "snapshots[1].parameters.nlist"},
		{"properties", "a.b", `properties["a.b"]`},
		{"properties", "", `properties[""]`},
		{"properties", `q"`, `properties["q\""]`},
		{"", "é", `["é"]`},
	} {
		if got := member(tc.path, tc.name); got != tc.want {
			t.Errorf("member(%q, %q) = %q, want %q", tc.path, tc.name, got, tc.want)
		}
	}
	if got := index("snapshot-log", 3); got != "snapshot-log[3]" {
		t.Errorf("index = %q", got)
	}
}

func TestFingerprint(t *testing.T) {
	// Expected UUIDs were computed independently (Python uuid.uuid5 over the
	// expected name), not with this package.
	for _, tc := range []struct {
		name     string
		d        Descriptor
		wantName string
		wantUUID string
	}{
		{"plain", Descriptor{"embedding", 768, "l2_squared", 4096, 1},
			`{"vector-field":"embedding","dimension":768,"metric":"l2_squared","nlist":4096,"clustering-profile-version":1}`,
			"b031652a-ecfd-57eb-b036-6acd633dc030"},
		{"quote and backslash", Descriptor{`a"b\c`, 3, "cosine", 7, 1},
			`{"vector-field":"a\"b\\c","dimension":3,"metric":"cosine","nlist":7,"clustering-profile-version":1}`,
			"0018580f-95d9-5847-a256-ae0764c601ef"},
		{"control characters", Descriptor{"\b\f\n\r\t\x00\x01\x1f", 3, "cosine", 7, 1},
			`{"vector-field":"\b\f\n\r\t\u0000\u0001\u001f","dimension":3,"metric":"cosine","nlist":7,"clustering-profile-version":1}`,
			"77820eaa-2001-5b5a-a8ba-c5d59c4e1766"},
		{"html and line separators raw", Descriptor{"<a>&b\u2028\u2029\x7f", 3, "cosine", 7, 1},
			"{\"vector-field\":\"<a>&b\u2028\u2029\x7f\",\"dimension\":3,\"metric\":\"cosine\",\"nlist\":7,\"clustering-profile-version\":1}",
			"79e6d400-d645-5514-8ff3-884ac989ffe8"},
		{"non-ASCII raw", Descriptor{"éмбеддинг😀", 3, "cosine", 7, 1},
			`{"vector-field":"éмбеддинг😀","dimension":3,"metric":"cosine","nlist":7,"clustering-profile-version":1}`,
			"37f7ffab-64bb-5241-a42f-09f5c524fdb4"},
		{"int32 limits", Descriptor{"向量", 2147483647, "l2_squared", 2147483647, 1},
			`{"vector-field":"向量","dimension":2147483647,"metric":"l2_squared","nlist":2147483647,"clustering-profile-version":1}`,
			"4b7c0689-3725-5832-943d-ac76ff6ef564"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(FingerprintName(tc.d)); got != tc.wantName {
				t.Errorf("FingerprintName = %s, want %s", got, tc.wantName)
			}
			if got := Fingerprint(tc.d); got != tc.wantUUID {
				t.Errorf("Fingerprint = %s, want %s", got, tc.wantUUID)
			}
		})
	}
}

func TestFingerprintEveryControlCharacter(t *testing.T) {
	short := map[byte]string{'\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}
	for c := byte(0); c < 0x20; c++ {
		want, ok := short[c]
		if !ok {
			want = `\u00` + string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&0xf])
		}
		name := string(FingerprintName(Descriptor{VectorField: string([]byte{c})}))
		if !strings.HasPrefix(name, `{"vector-field":"`+want+`",`) {
			t.Errorf("U+%04X written as %s, want %s", c, name, want)
		}
	}
}

func TestCentroidCrossCheck(t *testing.T) {
	m := mustParse(t, "testdata/valid/base.json")
	c, err := ParseCentroidFile("c", readFile(t, "testdata/centroid/valid/base.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSnapshotAgainstCentroid(&m.Snapshots[0], c); err != nil {
		t.Fatalf("matching snapshot rejected: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Snapshot, *CentroidMetadata)
		path string
	}{
		{"centroids location", func(s *Snapshot, c *CentroidMetadata) { c.Centroids = "other/" }, "index-tables.ivf_centroids.properties.location"},
		{"vector field", func(s *Snapshot, c *CentroidMetadata) { c.Descriptor.VectorField = "other" }, "vector-field"},
		{"dimension", func(s *Snapshot, c *CentroidMetadata) { c.Descriptor.Dimension = 9 }, "parameters.dimension"},
		{"metric", func(s *Snapshot, c *CentroidMetadata) { c.Descriptor.Metric = MetricL2Squared }, "metric"},
		{"nlist", func(s *Snapshot, c *CentroidMetadata) { c.Descriptor.NList = 17 }, "parameters.nlist"},
		{"fingerprint", func(s *Snapshot, c *CentroidMetadata) { c.Fingerprint = "a0577fb8-dfa5-596e-8bc3-ee20a78aa06d" }, "parameters.ivf_centroids_fingerprint"},
		{"artifact uuid", func(s *Snapshot, c *CentroidMetadata) { c.ArtifactUUID = "1b2c3d4e-5f60-4b7c-9d8e-9fa0b1c2d3e4" }, "parameters.ivf_centroids_uuid"},
		{"family", func(s *Snapshot, c *CentroidMetadata) { s.IndexFamily = "hnsw" }, "index-family"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := m.Snapshots[0].Clone()
			cc := *c
			tc.edit(&s, &cc)
			err := CheckSnapshotAgainstCentroid(&s, &cc)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v", err)
			}
			ve := asValidationError(t, err)
			if len(ve.Problems) != 1 || ve.Problems[0].Path != tc.path {
				t.Errorf("problems = %v, want one at %s", ve.Problems, tc.path)
			}
		})
	}
	// Snapshot 6 references another artifact: every rule it breaks is listed.
	err = CheckSnapshotAgainstCentroid(&m.Snapshots[1], c)
	ve := asValidationError(t, err)
	if len(ve.Problems) != 4 { // location, nlist, fingerprint, uuid
		t.Errorf("got %d problems: %v", len(ve.Problems), err)
	}
}

func TestFingerprintNameIsJSON(t *testing.T) {
	d := Descriptor{"a\"\\\n\x00<>&\u2028é", 1, "cosine", 2, 1}
	var got struct {
		VectorField string `json:"vector-field"`
		Dimension   int32  `json:"dimension"`
		Metric      string `json:"metric"`
		NList       int32  `json:"nlist"`
		Profile     int32  `json:"clustering-profile-version"`
	}
	if err := json.Unmarshal(FingerprintName(d), &got); err != nil {
		t.Fatal(err)
	}
	if got.VectorField != d.VectorField || got.Dimension != 1 || got.Metric != "cosine" || got.NList != 2 || got.Profile != 1 {
		t.Errorf("decoded %+v", got)
	}
}
