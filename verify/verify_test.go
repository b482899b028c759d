package verify

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/testfix"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
)

const (
	testRows = 3000
	testDim  = 17 // odd: exercises the final LVQ4 nibble
)

// TestValidIndexes verifies every kind of index ParqDB builds.
func TestValidIndexes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		encoding string
		metric   string
		strKey   bool
	}{
		{"lvq8-l2", metadata.EncodingLVQ8, metadata.MetricL2Squared, false},
		{"lvq4-l2", metadata.EncodingLVQ4, metadata.MetricL2Squared, false},
		{"source-l2", metadata.EncodingSource, metadata.MetricL2Squared, false},
		{"lvq8-cosine", metadata.EncodingLVQ8, metadata.MetricCosine, false},
		{"lvq4-cosine-string-key", metadata.EncodingLVQ4, metadata.MetricCosine, true},
		{"source-cosine-string-key", metadata.EncodingSource, metadata.MetricCosine, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			o := indexer.Options{Encoding: tc.encoding, Metric: tc.metric, NList: 30, VectorsFile: true}
			if tc.strKey {
				f.writeStringKeyed(t, "part-0.parquet", 1500, testDim, 4)
				o.KeyFields = []string{"name", "part"}
			} else {
				f.writePart(t, "part-0.parquet", 0, testRows/2, testDim, 1)
				f.writePart(t, "part-1.parquet", testRows/2, testRows/2, testDim, 2)
			}
			f.create(t, "idx", o)
			var progress []string
			rep := f.verify(t, "idx", Options{Progress: func(c string) { progress = append(progress, c) }})
			var skippable []string
			if tc.encoding == metadata.EncodingSource {
				skippable = append(skippable, CheckLVQ)
			}
			requireOK(t, rep, skippable...)
			if len(progress) != len(Checks) {
				t.Errorf("progress reported %v", progress)
			}
			if c, _ := rep.Check(CheckAssignment); !strings.Contains(c.Detail, "every row decided by the brute-force reference") {
				t.Errorf("assignment: %s", c.Detail)
			}
			if c, _ := rep.Check(CheckVectorsFile); c.Status != StatusOK || !strings.Contains(c.Detail, "every row is its postings row's source vector") {
				t.Errorf("vectors file: %s %s", c.Status, c.Detail)
			}
		})
	}
}

// TestIncrementalRefresh verifies an index after an incremental refresh,
// where CIDs have row groups in several files of two snapshot folders, and
// its previous snapshot, whose source state has since changed.
func TestIncrementalRefresh(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.writePart(t, "part-0.parquet", 0, 2000, 8, 1)
	f.create(t, "idx", indexer.Options{NList: 20})
	f.writePart(t, "part-1.parquet", 2000, 200, 8, 2)
	r, err := indexer.Refresh(ctx, f.buildEnv(), "idx", indexer.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Action != indexer.ActionIncremental {
		t.Fatalf("refresh action %v, want incremental", r.Action)
	}
	rep := f.verify(t, "idx", Options{})
	requireOK(t, rep)
	if c, _ := rep.Check(CheckLayout); strings.Contains(c.Detail, "; 0 CIDs span") {
		t.Fatalf("no CID spans several files after the refresh: %s", c.Detail)
	}
	if rep.SnapshotID != 2 {
		t.Fatalf("verified snapshot %d, want 2", rep.SnapshotID)
	}

	// Optimize rewrites the postings into a successor over the same source
	// state: both it and the refreshed snapshot verify.
	o, err := indexer.Optimize(ctx, f.buildEnv(), "idx", indexer.OptimizeOptions{})
	if err != nil || !o.Done {
		t.Fatalf("optimize: %+v %v", o, err)
	}
	requireOK(t, f.verify(t, "idx", Options{}))
	prev := f.verify(t, "idx", Options{SnapshotID: 2})
	requireOK(t, prev, CheckBinding)

	// Snapshot 1 indexed a source state that no longer exists.
	old := f.verify(t, "idx", Options{SnapshotID: 1})
	requireFail(t, old, map[string]string{CheckSource: "changed since snapshot 1"})
	if c, _ := old.Check(CheckBinding); c.Status != StatusSkipped {
		t.Fatalf("catalog binding of a non-current snapshot: %s", c.Status)
	}
	if _, err := Run(ctx, f.env, "idx", Options{SnapshotID: 7}); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("unknown snapshot: %v", err)
	}
	if _, err := Run(ctx, f.env, "nope", Options{}); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("unknown index: %v", err)
	}
}

// TestPartitionsAndSampling runs the join in several key-space partitions
// and decides assignments with the fast assigner on most rows: same
// verdicts.
func TestPartitionsAndSampling(t *testing.T) {
	f := newFixture(t)
	f.writePart(t, "part-0.parquet", 0, testRows, testDim, 5)
	f.create(t, "idx", indexer.Options{NList: 30})
	opts := Options{MemoryLimit: 100_000, ReferenceBudget: 50_000, Workers: 3}
	rep := f.verify(t, "idx", opts)
	requireOK(t, rep)
	if c, _ := rep.Check(CheckKeys); !strings.Contains(c.Detail, "partition") || strings.Contains(c.Detail, "(1 key-space") {
		t.Fatalf("keys: %s", c.Detail)
	}
	if c, _ := rep.Check(CheckAssignment); !strings.Contains(c.Detail, "ivf.Assigner") {
		t.Fatalf("assignment: %s", c.Detail)
	}

	_, _, man := f.current(t, "idx")
	i := fileWith(t, man, 3)
	f.rewritePostings(t, "idx", i, func(rows []postings.Row) []postings.Row {
		rows[0].CID = otherCID(t, f, man, i, rows[0].CID)
		rows[1].Key = rows[2].Key
		return rows
	})
	rep = f.verify(t, "idx", opts)
	requireFail(t, rep, map[string]string{CheckKeys: "occurs twice", CheckAssignment: "exact nearest centroid is cid"})
}

// corrupt builds a fresh lvq8 index and returns the fixture, its manifest
// and the postings location.
func corrupt(t *testing.T) (*fixture, *metadata.Snapshot, *postings.Manifest) {
	t.Helper()
	f := newFixture(t)
	f.writePart(t, "part-0.parquet", 0, testRows, testDim, 9)
	f.create(t, "idx", indexer.Options{NList: 30})
	requireOK(t, f.verify(t, "idx", Options{}))
	_, s, man := f.current(t, "idx")
	return f, s, man
}

func TestCorruptFlippedCodeBit(t *testing.T) {
	f, _, man := corrupt(t)
	i := fileWith(t, man, 1)
	row := f.readRows(t, man, i)[0]
	data := f.read(t, man.Files[i].Path)
	at := bytes.Index(data, row.Code)
	if at < 0 || bytes.Count(data, row.Code) != 1 {
		t.Fatal("code bytes not found once in the file")
	}
	data[at+3] ^= 0x10
	f.overwrite(t, man.Files[i].Path, data)
	rep := f.verify(t, "idx", Options{})
	// Parquet page checksums make the file unreadable: its rows are
	// missing from the join.
	requireFail(t, rep, map[string]string{
		CheckFiles: "checksum",
		CheckRows:  "not all rows readable",
		CheckKeys:  "unreadable postings file",
	})
}

// TestCorruptFlippedCodeBitConsistent rewrites the file and manifest
// validly: only the LVQ recomputation can see the flipped bit.
func TestCorruptFlippedCodeBitConsistent(t *testing.T) {
	f, _, man := corrupt(t)
	f.rewritePostings(t, "idx", fileWith(t, man, 1), func(rows []postings.Row) []postings.Row {
		rows[0].Code[5] ^= 0x01
		return rows
	})
	rep := f.verify(t, "idx", Options{})
	requireFail(t, rep, map[string]string{CheckLVQ: "stored code differs from lvq8"})
	requireOnlyFail(t, rep, CheckLVQ)
}

func TestCorruptMissingRow(t *testing.T) {
	f, _, man := corrupt(t)
	f.rewritePostings(t, "idx", fileWith(t, man, 2), func(rows []postings.Row) []postings.Row { return rows[1:] })
	rep := f.verify(t, "idx", Options{})
	requireFail(t, rep, map[string]string{
		CheckManifest: "rows 2999, ntotal 3000",
		CheckRows:     "the files hold 2999 rows",
		CheckKeys:     "has no posting",
	})
}

func TestCorruptDuplicatedKey(t *testing.T) {
	f, _, man := corrupt(t)
	f.rewritePostings(t, "idx", fileWith(t, man, 2), func(rows []postings.Row) []postings.Row {
		rows[1].Key = rows[0].Key
		return rows
	})
	rep := f.verify(t, "idx", Options{})
	requireFail(t, rep, map[string]string{CheckKeys: "occurs twice in the postings"})
	c, _ := rep.Check(CheckKeys)
	if !strings.Contains(c.Detail, "has no posting") {
		t.Fatalf("the key the duplicate replaced is not reported missing: %s", c.Detail)
	}
	requireOnlyFail(t, rep, CheckKeys)
}

func TestCorruptMisassignedRow(t *testing.T) {
	f, _, man := corrupt(t)
	i := fileWith(t, man, 1)
	f.rewritePostings(t, "idx", i, func(rows []postings.Row) []postings.Row {
		rows[0].CID = otherCID(t, f, man, i, rows[0].CID)
		return rows
	})
	rep := f.verify(t, "idx", Options{})
	requireFail(t, rep, map[string]string{CheckAssignment: "its exact nearest centroid is cid"})
	requireOnlyFail(t, rep, CheckAssignment)
}

// TestCorruptTwoCIDsInRowGroup changes the last cid of a row group in
// place and updates the manifest's CRC-32C, so that only the one-CID rule
// is broken.
func TestCorruptTwoCIDsInRowGroup(t *testing.T) {
	f, s, man := corrupt(t)
	k := -1
	for j, rg := range man.RowGroups {
		if rg.Rows >= 2 {
			k = j
			break
		}
	}
	if k < 0 {
		t.Fatal("no row group with two rows")
	}
	rg := man.RowGroups[k]
	path := man.Files[rg.File].Path
	data := f.read(t, path)
	pattern := bytes.Repeat(binary.LittleEndian.AppendUint32(nil, uint32(rg.CID)), int(rg.Rows))
	at := bytes.Index(data[rg.Offset:rg.Offset+rg.Length], pattern)
	if at < 0 {
		t.Fatal("cid column values not found")
	}
	end := rg.Offset + int64(at) + int64(len(pattern))
	binary.LittleEndian.PutUint32(data[end-4:end], uint32(otherCID(t, f, man, int(rg.File), rg.CID)))
	f.overwrite(t, path, data)
	man.RowGroups[k].CRC32C = crc32.Checksum(data[rg.Offset:rg.Offset+rg.Length], crc32.MakeTable(crc32.Castagnoli))
	mdata, err := man.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	f.overwrite(t, postings.SnapshotLayout(s).Manifest(), mdata)
	rep := f.verify(t, "idx", Options{})
	txt := requireFail(t, rep, map[string]string{CheckLayout: path})
	if !strings.Contains(txt, "cid") {
		t.Fatalf("no word about CIDs:\n%s", txt)
	}
}

// TestCorruptWrongFingerprint rewrites the centroid document with another
// valid UUIDv5 fingerprint.
func TestCorruptWrongFingerprint(t *testing.T) {
	f, s, _ := corrupt(t)
	loc := s.Parameters[metadata.ParamCentroidsLocation]
	old := s.Parameters[metadata.ParamFingerprint]
	wrong := metadata.Fingerprint(metadata.Descriptor{VectorField: "other", Dimension: testDim, Metric: metadata.MetricL2Squared, NList: 30, ClusteringProfileVersion: 1})
	data := f.read(t, loc)
	if !bytes.Contains(data, []byte(old)) {
		t.Fatal("fingerprint not in the centroid document")
	}
	f.overwrite(t, loc, bytes.ReplaceAll(data, []byte(old), []byte(wrong)))
	rep := f.verify(t, "idx", Options{})
	requireFail(t, rep, map[string]string{
		CheckCentroidMetadata: "fingerprint",
		CheckFingerprint:      "centroid metadata fingerprint " + wrong + ", but its descriptor gives " + old,
	})
	// The tables are still checked on their own.
	for _, name := range []string{CheckRoots, CheckCentroids, CheckAssignment} {
		if c, _ := rep.Check(name); c.Status != StatusOK {
			t.Errorf("%s: %s %s", name, c.Status, c.Detail)
		}
	}
}

// TestCorruptWrongSnapshotFingerprint gives the snapshot parameter another
// valid UUIDv5: the metadata still parses, the recomputation objects.
func TestCorruptWrongSnapshotFingerprint(t *testing.T) {
	f, s, _ := corrupt(t)
	_, e, err := catalog.LoadMetadata(context.Background(), f.env.Catalog, f.env.Warehouse, "idx")
	if err != nil {
		t.Fatal(err)
	}
	old := s.Parameters[metadata.ParamFingerprint]
	wrong := metadata.Fingerprint(metadata.Descriptor{VectorField: "embedding", Dimension: testDim, Metric: metadata.MetricCosine, NList: 30, ClusteringProfileVersion: 1})
	data := f.read(t, e.MetadataLocation)
	f.overwrite(t, e.MetadataLocation, bytes.ReplaceAll(data, []byte(old), []byte(wrong)))
	rep := f.verify(t, "idx", Options{})
	requireFail(t, rep, map[string]string{
		CheckCentroidMetadata: "ivf_centroids_fingerprint",
		CheckFingerprint:      "parameter ivf_centroids_fingerprint " + wrong + ", but the snapshot's descriptor fields give " + old,
	})
}

func TestCorruptMissingFileAndTruncation(t *testing.T) {
	f, _, man := corrupt(t)
	p0 := man.Files[0].Path
	if err := os.Remove(f.path(p0)); err != nil {
		t.Fatal(err)
	}
	if len(man.Files) > 1 {
		p1 := man.Files[1].Path
		data := f.read(t, p1)
		f.overwrite(t, p1, data[:len(data)-1])
	}
	rep := f.verify(t, "idx", Options{})
	want := map[string]string{CheckFiles: "open " + p0, CheckRows: "not all rows readable", CheckKeys: "has no posting"}
	requireFail(t, rep, want)
}

func TestCorruptSourceChanged(t *testing.T) {
	f, _, _ := corrupt(t)
	f.writePart(t, "part-1.parquet", testRows, 10, testDim, 3)
	rep := f.verify(t, "idx", Options{})
	requireFail(t, rep, map[string]string{CheckSource: "added part-1.parquet"})
	for _, name := range []string{CheckKeys, CheckLVQ, CheckAssignment} {
		if c, _ := rep.Check(name); c.Status != StatusSkipped {
			t.Errorf("%s: %s after a source change", name, c.Status)
		}
	}
}

func TestCorruptManifestAndTables(t *testing.T) {
	for _, tc := range []struct {
		name  string
		key   func(s *metadata.Snapshot, cm string) string
		check string
	}{
		{"manifest", func(s *metadata.Snapshot, _ string) string {
			return postings.SnapshotLayout(s).Manifest()
		}, CheckManifest},
		{"roots", func(_ *metadata.Snapshot, cm string) string {
			return postings.RootsLocationFor(cm) + postings.RootsFile
		}, CheckRoots},
		{"centroids", func(_ *metadata.Snapshot, cm string) string { return cm + postings.CentroidsFile }, CheckCentroids},
		{"source-files", func(s *metadata.Snapshot, _ string) string {
			return postings.SnapshotLayout(s).SourceFiles()
		}, CheckSourceFiles},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, s, _ := corrupt(t)
			key := tc.key(s, s.IndexTables[metadata.RoleCentroids].Properties["location"])
			data := f.read(t, key)
			f.overwrite(t, key, data[:len(data)/2])
			rep := f.verify(t, "idx", Options{})
			requireFail(t, rep, map[string]string{tc.check: ""})
		})
	}
}

func TestReportJSONAndText(t *testing.T) {
	rep := &Report{Index: "i", SnapshotID: 3, MetadataLocation: "metadata/x.json", Checks: []Check{
		{Name: CheckCatalog, Status: StatusOK, Detail: "fine"},
		{Name: CheckLVQ, Status: StatusSkipped, Detail: "source"},
		{Name: CheckKeys, Status: StatusFail, Detail: "dup"},
	}}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"index":"i","snapshot":3,"metadata-location":"metadata/x.json","ok":false,"checks":[` +
		`{"name":"catalog entry","ok":true,"status":"ok","detail":"fine"},` +
		`{"name":"lvq codes","ok":true,"status":"skipped","detail":"source"},` +
		`{"name":"postings keys","ok":false,"status":"FAIL","detail":"dup"}]}`
	if string(b) != want {
		t.Fatalf("JSON\n%s\nwant\n%s", b, want)
	}
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"postings keys: FAIL    (dup)", "lvq codes:     skipped (source)", "verdict: FAIL (1 of 3 checks failed)"} {
		if !strings.Contains(buf.String(), line) {
			t.Errorf("text lacks %q:\n%s", line, buf.String())
		}
	}
}

func TestIdentityRecipe(t *testing.T) {
	// The profile's recipe, by hand: sha256 of the header and one line
	// per file in key order.
	got := tableIdentity([]sourceFile{{"b.parquet", 20, "mtime:5"}, {"a.parquet", 10, "etag:\"x\""}})
	h := "parqdb-source-identity-v1\n9:a.parquet 10 etag:\"x\"\n9:b.parquet 20 mtime:5\n"
	if want := sha256Hex(h); got != want {
		t.Fatalf("identity %s, want %s", got, want)
	}
}

func TestOptionsValidate(t *testing.T) {
	f := newFixture(t)
	if _, err := Run(context.Background(), f.env, "x", Options{Workers: -1}); !errors.Is(err, ErrOptions) {
		t.Fatalf("negative workers: %v", err)
	}
}

// BenchmarkRun verifies a 20,000 × 64 lvq8 index (nlist 100); set
// PARQDB_BENCH_LARGE=1 for 200,000 rows.
func BenchmarkRun(b *testing.B) {
	n := 20000
	if os.Getenv("PARQDB_BENCH_LARGE") != "" {
		n = 200000
	}
	f := newFixture(b)
	f.writePart(b, "part-0.parquet", 0, n, 64, 1)
	if _, err := indexer.Create(context.Background(), f.buildEnv(), indexer.Options{Name: "idx", Source: f.src, VectorField: "embedding", KeyFields: []string{"id"}, NList: 100}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rep, err := Run(context.Background(), f.env, "idx", Options{})
		if err != nil || !rep.OK() {
			b.Fatalf("%v %v", err, rep.Failed())
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestCorruptCentroidTableUnreadable is issue 10 defect 3: a centroid table
// that is missing, or named by an invalid location, made Run panic in
// package ivf (the assignment check used roots without leaves). Every such
// warehouse is a report: the table's check fails, the assignment check is
// skipped, and Run returns no error.
func TestCorruptCentroidTableUnreadable(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, f *fixture, cmLoc, centroids string)
		check  string
		detail string
	}{
		{"centroids deleted", func(t *testing.T, f *fixture, _, centroids string) {
			if err := os.Remove(f.path(centroids + postings.CentroidsFile)); err != nil {
				t.Fatal(err)
			}
		}, CheckCentroids, "open " + "%s"},
		{"centroids location invalid", func(t *testing.T, f *fixture, cmLoc, centroids string) {
			data := f.read(t, cmLoc)
			f.overwrite(t, cmLoc, bytes.Replace(data, []byte(`"`+centroids+`"`), []byte(`"../../etc/"`), 1))
		}, CheckCentroids, `table location "../../etc/"`},
		{"roots deleted", func(t *testing.T, f *fixture, cmLoc, _ string) {
			data := f.read(t, cmLoc)
			var cm metadata.CentroidMetadata
			if err := json.Unmarshal(data, &cm); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(f.path(cm.Roots + postings.RootsFile)); err != nil {
				t.Fatal(err)
			}
		}, CheckRoots, "open "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, s, _ := corrupt(t)
			params, err := s.IVF()
			if err != nil {
				t.Fatal(err)
			}
			cmLoc := params.CentroidsLocation
			var cm metadata.CentroidMetadata
			if err := json.Unmarshal(f.read(t, cmLoc), &cm); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, f, cmLoc, cm.Centroids)
			rep := f.verify(t, "idx", Options{})
			detail := tc.detail
			if strings.Contains(detail, "%s") {
				detail = fmt.Sprintf(detail, cm.Centroids+postings.CentroidsFile)
			}
			requireFail(t, rep, map[string]string{tc.check: detail})
			if c, _ := rep.Check(CheckAssignment); c.Status != StatusSkipped {
				t.Errorf("assignment: %s %q without a valid centroid artifact", c.Status, c.Detail)
			}
		})
	}
}

// generatedIDs matches the ids ParqDB generates and reports: UUIDs, with
// or without dashes, write ids and hashes (runs of 8 or more hex digits).
var generatedIDs = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{8,}`)

// TestUnboundSourceNotRead is issue 10 defect 4: a metadata file whose
// source-table names a location the catalog never bound (a local file such
// as /etc/passwd, another bucket) made verify open and quote it. Now the
// binding check fails and the source check is skipped without reading the
// location; the report never quotes the file.
func TestUnboundSourceNotRead(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside.parquet")
	if err := os.WriteFile(outside, []byte("PAR1 secret bytes of a file nobody bound PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{outside, "/etc/passwd", "s3://other-bucket/prefix/"} {
		t.Run(loc, func(t *testing.T) {
			f, s, _ := corrupt(t)
			_, entry, err := catalog.LoadMetadata(context.Background(), f.env.Catalog, f.env.Warehouse, "idx")
			if err != nil {
				t.Fatal(err)
			}
			old := s.SourceTable.Properties["location"]
			data := f.read(t, entry.MetadataLocation)
			tampered := bytes.Replace(data, []byte(`"location": "`+old+`"`), []byte(`"location": "`+loc+`"`), 1)
			if bytes.Equal(tampered, data) {
				t.Fatalf("source location %q not found in the metadata file", old)
			}
			f.overwrite(t, entry.MetadataLocation, tampered)
			rep := f.verify(t, "idx", Options{})
			text := requireFail(t, rep, map[string]string{CheckBinding: "catalog source binding does not match"})
			if c, _ := rep.Check(CheckSource); c.Status != StatusSkipped || !strings.Contains(c.Detail, "not read") {
				t.Errorf("source binding: %s %q, want skipped without reading %s", c.Status, c.Detail, loc)
			}
			// The report names generated ids (UUIDs, write ids, hashes) in
			// lowercase hex, which may contain "ec2" by chance: they are
			// masked before looking for what an unbound source would leak.
			masked := generatedIDs.ReplaceAllString(text, "<id>")
			for _, leak := range []string{"secret bytes", "root:", "other-bucket: ", "ec2", "169.254"} {
				if strings.Contains(masked, leak) {
					t.Errorf("the report quotes %q from an unbound source:\n%s", leak, text)
				}
			}
		})
	}
}

// TestForeignObjectInTableLocation: a file inside the postings table
// location that the manifest does not list — a Parquet file of another
// schema, as the key-rows table was before definition version 2, or any
// other object — fails the manifest check and names the file; in a
// version-1 table, any object other than its known side objects does too.
func TestForeignObjectInTableLocation(t *testing.T) {
	for _, name := range []string{"foreign.parquet", "sub/bucket-000000-000.parquet", "notes.txt", "manifest.json"} {
		t.Run(name, func(t *testing.T) {
			f, s, _ := corrupt(t)
			key := postings.SnapshotLayout(s).Table + name
			if err := storage.WriteAll(context.Background(), f.env.Warehouse, key, f.read(t, postings.SnapshotLayout(s).KeyRows())); err != nil {
				t.Fatal(err)
			}
			requireOnlyFail(t, f.verify(t, "idx", Options{}), CheckManifest)
			requireFail(t, f.verify(t, "idx", Options{}), map[string]string{CheckManifest: key})
		})
	}
	t.Run("version 1", func(t *testing.T) {
		wh, cat := testfix.OpenV1Layout(t)
		m, _, err := catalog.LoadMetadata(context.Background(), cat, wh, "v1")
		if err != nil {
			t.Fatal(err)
		}
		key := postings.SnapshotLayout(m.CurrentSnapshot()).Table + "calibration-x.json"
		if err := storage.WriteAll(context.Background(), wh, key, []byte("{}")); err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), Env{Warehouse: wh, Catalog: cat}, "v1", Options{})
		if err != nil {
			t.Fatal(err)
		}
		requireFail(t, rep, map[string]string{CheckManifest: key})
	})
}
