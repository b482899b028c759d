package reliability_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/postings"
)

// damage is one way to break a warehouse file. A flipped byte may land
// where it means nothing (free space of a SQLite page, a statistic in a
// Parquet footer), so a command may legitimately not notice it; every
// other damage breaks what any reader of the file needs.
type damage struct {
	name        string
	apply       func(path string, data []byte) error
	mayBeBenign bool
}

var damages = []damage{
	{"deleted", func(p string, _ []byte) error { return os.Remove(p) }, false},
	{"empty", func(p string, _ []byte) error { return os.WriteFile(p, nil, 0o644) }, false},
	{"half", func(p string, data []byte) error { return os.WriteFile(p, data[:len(data)/2], 0o644) }, false},
	{"flipped", func(p string, data []byte) error {
		// One byte in the middle inverted: sizes and framing intact.
		b := slices.Clone(data)
		if len(b) > 0 {
			b[len(b)/2] ^= 0xff
		}
		return os.WriteFile(p, b, 0o644)
	}, true},
	{"garbage", func(p string, data []byte) error {
		// Same length, seeded random bytes: the footer, the JSON or the
		// SQLite header are all gone.
		rng := rand.New(rand.NewPCG(uint64(len(data)), 10))
		g := make([]byte, max(len(data), 64))
		for i := range g {
			g[i] = byte(rng.UintN(256))
		}
		return os.WriteFile(p, g, 0o644)
	}, false},
}

// matrixCommand is one read command of the matrix. reads reports whether
// the command must read the file of the given kind (and so fail, exit 1,
// when it is damaged); a command that may or may not read it (search
// reads only the lists it probes) may succeed, but must still not panic.
type matrixCommand struct {
	name  string
	args  func(wh, meta, queries string) []string
	reads func(kind string) bool
	// appended runs the command with a small part appended to the source
	// (removed again afterwards), so that refresh reads the snapshot's
	// source-file list to plan an incremental refresh.
	appended bool
}

// The kinds of warehouse file.
const (
	kindCatalog     = "catalog"
	kindMetadata    = "index metadata"
	kindCentroidDoc = "centroid metadata"
	kindCentroids   = "ivf_centroids table"
	kindRoots       = "ivf_roots table"
	kindManifest    = "postings manifest"
	kindSourceFiles = "source-files list"
	kindPostings    = "postings file"
	kindKeyRows     = "key-rows table"
)

func fileKind(rel string) string {
	switch {
	case rel == "catalog.db" || strings.HasPrefix(rel, "catalog/"):
		return kindCatalog
	case strings.HasPrefix(rel, "metadata/") && strings.Count(rel, "/") == 2 && strings.HasSuffix(rel, "/v1.metadata.json"):
		return kindCentroidDoc
	case strings.HasPrefix(rel, "metadata/"):
		return kindMetadata
	case strings.HasSuffix(rel, "/ivf_centroids/centroids.parquet"):
		return kindCentroids
	case strings.HasSuffix(rel, "/ivf_roots/roots.parquet"):
		return kindRoots
	case strings.HasSuffix(rel, "/manifest.json"):
		return kindManifest
	case strings.HasSuffix(rel, "/source-files.json"):
		return kindSourceFiles
	case strings.HasSuffix(rel, "/"+postings.KeyRowsName):
		return kindKeyRows
	case strings.HasSuffix(rel, ".parquet") && strings.Contains(rel, "/ivf_postings/"):
		return kindPostings
	}
	return ""
}

func kinds(k ...string) func(string) bool {
	return func(kind string) bool { return slices.Contains(k, kind) }
}

// opened: the kinds query.Open reads (catalog, metadata, the artifact,
// the manifest and every postings file), and with a join (search's default
// output) or a key lookup the key-rows table too.
var opened = kinds(kindCatalog, kindMetadata, kindCentroidDoc, kindCentroids, kindRoots, kindManifest, kindPostings)

var openedJoin = kinds(kindCatalog, kindMetadata, kindCentroidDoc, kindCentroids, kindRoots, kindManifest, kindPostings, kindKeyRows)

var matrixCommands = []matrixCommand{
	{name: "index describe", args: indexArgs("index", "describe", "v"), reads: kinds(kindCatalog, kindMetadata)},
	{name: "index history", args: indexArgs("index", "history", "v"), reads: kinds(kindCatalog, kindMetadata)},
	{name: "index list", args: indexArgs("index", "list"), reads: kinds(kindCatalog, kindMetadata)},
	{name: "search --vector", args: indexArgs("search", "v", "--vector", "[0,0,0,0,0,0,0,0]", "-k", "3"), reads: openedJoin},
	{name: "search --near-key", args: indexArgs("search", "v", "--near-key", "7", "-k", "3"), reads: openedJoin},
	{name: "index verify", args: indexArgs("index", "verify", "v", "-q"),
		reads: kinds(kindCatalog, kindMetadata, kindCentroidDoc, kindCentroids, kindRoots, kindManifest, kindSourceFiles, kindPostings, kindKeyRows)},
	// The source is unchanged, so refresh decides "nothing to do" from the
	// metadata alone.
	{name: "index refresh --dry-run", args: indexArgs("index", "refresh", "v", "--dry-run", "-q"), reads: kinds(kindCatalog, kindMetadata)},
	{name: "index refresh --dry-run, source appended", args: indexArgs("index", "refresh", "v", "--dry-run", "-q"),
		reads: kinds(kindCatalog, kindMetadata, kindSourceFiles), appended: true},
	{name: "gc --dry-run", args: indexArgs("gc", "--dry-run"), reads: kinds(kindCatalog, kindMetadata, kindCentroidDoc)},
	{name: "metadata validate", args: func(_, meta, _ string) []string { return []string{"metadata", "validate", meta} },
		reads: kinds(kindMetadata)},
	{name: "bench", args: func(wh, _, q string) []string {
		return []string{"--warehouse", wh, "bench", "v", "--queries", q, "-k", "3", "--nprobe", "1,8", "--cold-queries", "2", "--threads", "1"}
	}, reads: opened},
}

// indexArgs is a command line on the warehouse.
func indexArgs(args ...string) func(wh, meta, queries string) []string {
	return func(wh, _, _ string) []string { return append([]string{"--warehouse", wh}, args...) }
}

// damageFixture is a small index (600 rows, nlist 8, lvq8) built by the
// binary into a pristine warehouse that each case copies.
type damageFixture struct {
	env                    []string // PARQDB_CATALOG for every run
	pristine, src, queries string
	files                  []string // warehouse-relative, slash-separated
	metaRel                string   // the current index metadata file
}

// newDamageFixture builds the index with catalog spec cat ("" for SQLite
// in the warehouse, "warehouse" for the object-store catalog, whose files
// then are part of the warehouse too).
func newDamageFixture(t *testing.T, cat string) *damageFixture {
	t.Helper()
	matrixCLI.binary(t)
	dir := t.TempDir()
	fx := &damageFixture{env: []string{"PARQDB_CATALOG=" + cat}, src: newSource(t),
		pristine: filepath.Join(dir, "pristine"), queries: filepath.Join(dir, "queries.fvecs")}
	if r := matrixCLI.run(t, fx.env, nil, "--warehouse", fx.pristine, "index", "create", "v", "--source", fx.src,
		"--vector-field", "embedding", "--key-fields", "id", "--nlist", "8", "-q"); r.code != 0 {
		t.Fatalf("index create: exit %d\n%s", r.code, r.output())
	}
	_, vecs := partVectors(0, 4, 1)
	writeFvecs(t, fx.queries, vecs)
	err := filepath.WalkDir(fx.pristine, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(fx.pristine, p)
			fx.files = append(fx.files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fx.files {
		if fileKind(f) == "" {
			t.Fatalf("warehouse file %s of no known kind: the matrix must cover it", f)
		}
		if fileKind(f) == kindMetadata {
			fx.metaRel = f
		}
	}
	return fx
}

// copy returns a fresh copy of the pristine warehouse.
func (fx *damageFixture) copy(t *testing.T) string {
	t.Helper()
	wh := filepath.Join(t.TempDir(), "wh")
	copyTree(t, fx.pristine, wh)
	return wh
}

// run runs command c on warehouse wh.
func (fx *damageFixture) run(t *testing.T, c matrixCommand, wh string) cliResult {
	t.Helper()
	if c.appended {
		part := filepath.Join(fx.src, "p000001.parquet")
		if err := writePart(part, 600, 20, 2); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(part)
	}
	return matrixCLI.run(t, fx.env, nil, c.args(wh, filepath.Join(wh, filepath.FromSlash(fx.metaRel)), fx.queries)...)
}

// TestDamagedWarehouseMatrix is the acceptance test of issue 10 "no panic
// reachable from any input": a small index is built, then every file of
// its warehouse in turn is deleted, emptied, cut in half, has a byte
// inverted, and is replaced by garbage, and every read command runs on
// the result. No run may panic; a command that must read the damaged file
// exits 1 naming it; any other run exits 0 or 1, and when it fails it
// names the file too. The two catalogs' matrices run in parallel, with
// each other and with TestMutatedJSONFields: each is a long sequence of
// short child processes, with a fixture of its own.
func TestDamagedWarehouseMatrix(t *testing.T) {
	t.Parallel()
	for _, cat := range []string{"", "warehouse"} {
		name := "sqlite"
		if cat != "" {
			name = cat + " catalog"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			damageMatrix(t, cat)
		})
	}
}

func damageMatrix(t *testing.T, cat string) {
	fx := newDamageFixture(t, cat)
	files := fx.files
	run := fx.run
	clean := fx.copy(t)
	for _, c := range matrixCommands { // the pristine warehouse passes
		if r := run(t, c, clean); r.code != 0 {
			t.Fatalf("%s on the undamaged warehouse: exit %d\n%s", c.name, r.code, r.output())
		}
	}

	runs, failures, flipsCaught := 0, 0, 0
	for _, f := range files {
		for _, d := range damages {
			name := f + " " + d.name
			t.Run(name, func(t *testing.T) {
				wh := fx.copy(t)
				p := filepath.Join(wh, filepath.FromSlash(f))
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := d.apply(p, data); err != nil {
					t.Fatal(err)
				}
				kind := fileKind(f)
				for _, c := range matrixCommands {
					runs++
					r := run(t, c, wh)
					if d.mayBeBenign && c.name == "index verify" && r.code == 1 {
						flipsCaught++
					}
					problem := ""
					switch {
					case r.panicked():
						problem = "panicked"
					case r.code == 2 && c.name == "metadata validate" && d.name == "deleted" && namesFile(r.output(), f):
						// A path argument that does not exist is a usage
						// error by that command's contract.
					case r.code != 0 && r.code != 1:
						problem = fmt.Sprintf("exit %d", r.code)
					case r.code == 0 && kind == kindCatalog && (d.name == "deleted" || d.name == "empty" && cat == "") &&
						(c.name == "index list" || c.name == "gc --dry-run"):
						// A missing catalog file, or an empty SQLite file,
						// is an empty catalog: nothing to list, nothing
						// live. (See docs/reliability.md on what gc then
						// does.)
					case r.code == 0 && c.appended && namesFile(r.output(), f):
						// Refresh without the source-file list plans a full
						// rebuild instead of an incremental one, by design
						// (docs/reliability.md §3), and says which file it lacked.
					case r.code == 1 && kind == kindCatalog && d.name == "deleted" &&
						(strings.Contains(r.output(), "index not found") || strings.Contains(r.output(), "no warehouse at")):
						// Without its entry file the object-store catalog
						// has no index v, or no entry at all, and then the
						// location holds no warehouse that a command other
						// than create may open: nothing else to name.
					case c.reads(kind) && r.code != 1 && !d.mayBeBenign:
						problem = fmt.Sprintf("exit %d, but it reads the %s", r.code, kind)
					case r.code == 1 && kind == kindCatalog &&
						(strings.Contains(r.output(), "catalog source binding does not match") || strings.Contains(r.output(), "the catalog binds")):
						// A changed byte of the catalog entry that lands in
						// the bound source location (where it lands depends
						// on the length of the temporary path) is caught by
						// the binding check, which names both locations.
					case r.code == 1 && !namesFile(r.output(), f):
						problem = "its error does not name " + f
					}
					if problem != "" {
						failures++
						t.Errorf("%s: %s\n%s", c.name, problem, tail(r.output(), 1500))
					}
				}
			})
		}
	}
	t.Logf("damaged-warehouse matrix, catalog %q: %d files × %d damages = %d warehouses, %d command runs, %d failures; verify caught %d of %d flipped bytes",
		cat, len(files), len(damages), len(files)*len(damages), runs, failures, flipsCaught, len(files))
}

// namesFile reports whether out names warehouse file rel by its
// warehouse-relative key (the catalog database by its path, which ends in
// "catalog.db").
func namesFile(out, rel string) bool { return strings.Contains(out, rel) }

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
