package verify

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/internal/testfix"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
)

// fixture is a local warehouse with a SQLite catalog and a source folder.
type fixture struct {
	env Env
	dir string // the warehouse folder
	src string // the source folder
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	w := testfix.NewWarehouse(t, filepath.Join(dir, "warehouse"))
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	return &fixture{env: Env{Warehouse: w.Bucket, Catalog: w.Catalog}, dir: w.Dir, src: src}
}

func (f *fixture) buildEnv() indexer.Env {
	return indexer.Env{Warehouse: f.env.Warehouse, Catalog: f.env.Catalog}
}

// writePart writes n clustered vectors with long keys first…first+n-1 to
// the source folder.
func (f *fixture) writePart(t testing.TB, name string, first int64, n, dim int, seed uint64) {
	t.Helper()
	testfix.WritePart(t, filepath.Join(f.src, name), first, n, dim, seed, 2, sourcetest.Options{RowGroupRows: 500})
}

// writeStringKeyed writes n vectors with the composite key (name string,
// part int) to the source folder.
func (f *fixture) writeStringKeyed(t *testing.T, name string, n, dim int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	tab := sourcetest.Table{
		Fields: []sourcetest.Field{
			sourcetest.F("name", parquet.String()),
			sourcetest.F("part", parquet.Int(32)),
			sourcetest.F("embedding", sourcetest.VectorNode(sourcetest.List3, true, false)),
		},
		RowGroupRows: 400,
	}
	for i := range n {
		v := make([]float64, dim)
		c := float64(rng.IntN(5))
		for j := range v {
			v[j] = c + rng.NormFloat64()
		}
		// Names with a NUL and shared prefixes exercise the key encoding.
		tab.Rows = append(tab.Rows, []any{strings.Repeat("k\x00", i%3) + string(rune('a'+i%26)), int32(i), v})
	}
	var buf bytes.Buffer
	if err := tab.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.src, name), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// create builds index name over the source folder.
func (f *fixture) create(t *testing.T, name string, o indexer.Options) {
	t.Helper()
	o.Name, o.Source = name, f.src
	if o.VectorField == "" {
		o.VectorField = "embedding"
	}
	if o.KeyFields == nil {
		o.KeyFields = []string{"id"}
	}
	if _, err := indexer.Create(context.Background(), f.buildEnv(), o); err != nil {
		t.Fatal(err)
	}
}

// verify runs Run and fails the test on an error.
func (f *fixture) verify(t *testing.T, name string, o Options) *Report {
	t.Helper()
	rep, err := Run(context.Background(), f.env, name, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Checks) != len(Checks) {
		t.Fatalf("%d checks, want %d", len(rep.Checks), len(Checks))
	}
	for i, c := range rep.Checks {
		if c.Name != Checks[i] {
			t.Fatalf("check %d is %q, want %q", i, c.Name, Checks[i])
		}
	}
	return rep
}

// requireOK fails unless every check passed (skipped only where allowed).
func requireOK(t *testing.T, rep *Report, skippable ...string) {
	t.Helper()
	var buf bytes.Buffer
	rep.WriteText(&buf)
	for _, c := range rep.Checks {
		// The vectors file is optional: its check is skipped without one.
		if c.Status == StatusOK || c.Status == StatusSkipped && (slices.Contains(skippable, c.Name) || c.Name == CheckVectorsFile) {
			continue
		}
		t.Fatalf("check %s is %s:\n%s", c.Name, c.Status, buf.String())
	}
	if !rep.OK() {
		t.Fatalf("report not OK:\n%s", buf.String())
	}
}

// requireFail fails unless every named check failed with a detail holding
// want[name]; it returns the report text.
func requireFail(t *testing.T, rep *Report, want map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	rep.WriteText(&buf)
	if rep.OK() {
		t.Fatalf("corruption not caught:\n%s", buf.String())
	}
	for name, sub := range want {
		c, _ := rep.Check(name)
		if c.Status != StatusFail || !strings.Contains(c.Detail, sub) {
			t.Errorf("check %s: %s %q, want FAIL with %q\n%s", name, c.Status, c.Detail, sub, buf.String())
		}
	}
	return buf.String()
}

// requireOnlyFail fails unless exactly the named checks failed.
func requireOnlyFail(t *testing.T, rep *Report, names ...string) {
	t.Helper()
	var got []string
	for _, c := range rep.Failed() {
		got = append(got, c.Name)
	}
	slices.Sort(got)
	names = slices.Sorted(slices.Values(names))
	if !slices.Equal(got, names) {
		var buf bytes.Buffer
		rep.WriteText(&buf)
		t.Fatalf("failed checks %v, want exactly %v\n%s", got, names, buf.String())
	}
}

// current loads the index's current snapshot and manifest.
func (f *fixture) current(t *testing.T, name string) (*metadata.Metadata, *metadata.Snapshot, *postings.Manifest) {
	t.Helper()
	ctx := context.Background()
	m, _, err := catalog.LoadMetadata(ctx, f.env.Catalog, f.env.Warehouse, name)
	if err != nil {
		t.Fatal(err)
	}
	s := m.CurrentSnapshot()
	data, err := storage.ReadAll(ctx, f.env.Warehouse, postings.SnapshotLayout(s).Manifest())
	if err != nil {
		t.Fatal(err)
	}
	man, err := postings.ParseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	return m, s, man
}

func (f *fixture) path(key string) string { return filepath.Join(f.dir, filepath.FromSlash(key)) }

func (f *fixture) read(t *testing.T, key string) []byte {
	t.Helper()
	b, err := os.ReadFile(f.path(key))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// overwrite replaces a warehouse object in place, as a corruption would.
func (f *fixture) overwrite(t *testing.T, key string, data []byte) {
	t.Helper()
	if err := os.WriteFile(f.path(key), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readRows reads every row of postings file i (copies).
func (f *fixture) readRows(t *testing.T, man *postings.Manifest, i int) []postings.Row {
	t.Helper()
	data := f.read(t, man.Files[i].Path)
	var rows []postings.Row
	_, err := postings.ReadFile(bytes.NewReader(data), int64(len(data)), man.Schema(), func(_ int, r postings.Row) error {
		rows = append(rows, postings.Row{CID: r.CID, Key: slices.Clone(r.Key), Offset: r.Offset, Scale: r.Scale, Code: slices.Clone(r.Code)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// rewritePostings replaces postings file i with rows written by a valid
// writer, and the manifest with a valid one describing the new file: the
// result is internally consistent, so only semantic checks can object.
func (f *fixture) rewritePostings(t *testing.T, name string, i int, mutate func(rows []postings.Row) []postings.Row) {
	t.Helper()
	_, s, man := f.current(t, name)
	rows := mutate(f.readRows(t, man, i))
	slices.SortStableFunc(rows, func(a, b postings.Row) int { return cmp.Compare(a.CID, b.CID) })
	schema := man.Schema()
	for k := range schema.Keys {
		schema.Keys[k].Name = s.SourceKeyFields[k]
	}
	var buf bytes.Buffer
	bw, err := postings.NewBucketWriter(&buf, schema, man.Files[i].Bucket, postings.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < len(rows); {
		hi := lo
		for hi < len(rows) && rows[hi].CID == rows[lo].CID {
			hi++
		}
		if err := bw.WriteCID(rows[lo].CID, rows[lo:hi]); err != nil {
			t.Fatal(err)
		}
		lo = hi
	}
	fe, err := bw.Close()
	if err != nil {
		t.Fatal(err)
	}
	fe.Path = man.Files[i].Path
	f.overwrite(t, fe.Path, buf.Bytes())
	files := make([]postings.FileEntry, len(man.Files))
	for j := range man.Files {
		if j == i {
			files[j] = fe
			continue
		}
		files[j] = man.Files[j]
		for _, rg := range man.RowGroups {
			if int(rg.File) == j {
				rg.File = 0
				files[j].Ranges = append(files[j].Ranges, rg)
			}
		}
		slices.SortFunc(files[j].Ranges, func(a, b postings.Range) int { return cmp.Compare(a.RowGroup, b.RowGroup) })
	}
	nm, err := postings.NewManifest(schema, man.NList, files)
	if err != nil {
		t.Fatal(err)
	}
	data, err := nm.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	f.overwrite(t, postings.SnapshotLayout(s).Manifest(), data)
}

// fileWith returns the index of a postings file with at least n rows.
func fileWith(t *testing.T, man *postings.Manifest, n int64) int {
	t.Helper()
	for i, fe := range man.Files {
		if fe.Rows >= n {
			return i
		}
	}
	t.Fatalf("no postings file with %d rows", n)
	return -1
}

// otherCID returns a CID of file i's root bucket other than cid.
func otherCID(t *testing.T, f *fixture, man *postings.Manifest, i int, cid int32) int32 {
	t.Helper()
	_, s, _ := f.current(t, "idx")
	key := postings.RootsLocationFor(s.IndexTables[metadata.RoleCentroids].Properties["location"]) + postings.RootsFile
	data := f.read(t, key)
	offsets, _, err := postings.ReadRoots(bytes.NewReader(data), int64(len(data)), man.Dim)
	if err != nil {
		t.Fatal(err)
	}
	b := man.Files[i].Bucket
	for c := offsets[b]; c < offsets[b+1]; c++ {
		if c != cid {
			return c
		}
	}
	t.Fatalf("root bucket %d has only cid %d", b, cid)
	return -1
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(h[:])
}
