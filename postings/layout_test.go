package postings

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/parqdb/parqdb/location"
)

func TestLayoutNames(t *testing.T) {
	art := uuid.MustParse("fe985f6d-3592-4385-a1ca-71347057a210")
	idx := uuid.MustParse("2f1c7f5e-3c43-4a44-8f2a-cf560c4db8d1")
	for got, want := range map[string]string{
		CentroidsLocation(art):                   "indexes/fe985f6d35924385a1ca71347057a210/1/ivf_centroids/",
		RootsLocation(art):                       "indexes/fe985f6d35924385a1ca71347057a210/1/ivf_roots/",
		CentroidMetadataLocation(art):            "metadata/fe985f6d-3592-4385-a1ca-71347057a210/v1.metadata.json",
		PostingsLocation(idx, 701, 0xaa):         "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/701-00000000000000aa/ivf_postings/",
		BucketFileName(3, 0):                     "bucket-000003-000.parquet",
		BucketFileName(1234567, 1000):            "bucket-1234567-1000.parquet",
		RootsLocationFor(CentroidsLocation(art)): RootsLocation(art),
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		if err := location.Check(got); err != nil {
			t.Errorf("%q: %v", got, err)
		}
	}
}

func TestCheckIndexTable(t *testing.T) {
	idx := uuid.MustParse("2f1c7f5e-3c43-4a44-8f2a-cf560c4db8d1")
	good := map[string]string{
		"ivf_centroids": "indexes/fe985f6d35924385a1ca71347057a210/1/ivf_centroids/",
		"ivf_postings":  "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/701-00000000000000aa/ivf_postings/",
	}
	for role, loc := range good {
		if err := CheckIndexTable(role, 1, map[string]string{"location": loc}, idx); err != nil {
			t.Fatalf("%s: %v", role, err)
		}
	}
	if err := CheckIndexTable("ivf_postings", PostingsVersion, map[string]string{"location": good["ivf_postings"]}, idx); err != nil {
		t.Fatalf("ivf_postings version %d: %v", PostingsVersion, err)
	}
	bad := []struct {
		name, role string
		version    int32
		props      map[string]string
	}{
		{"version 3", "ivf_postings", 3, map[string]string{"location": good["ivf_postings"]}},
		{"version 0", "ivf_postings", 0, map[string]string{"location": good["ivf_postings"]}},
		{"centroids definition version 2", "ivf_centroids", 2, map[string]string{"location": good["ivf_centroids"]}},
		{"no location", "ivf_postings", 1, map[string]string{}},
		{"extra property", "ivf_postings", 1, map[string]string{"location": good["ivf_postings"], "x": "y"}},
		{"no trailing slash", "ivf_postings", 1, map[string]string{"location": "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/701-00000000000000aa/ivf_postings"}},
		{"other index", "ivf_postings", 1, map[string]string{"location": "indexes/2f1c7f5e3c434a448f2acf560c4db8d2/701-00000000000000aa/ivf_postings/"}},
		{"dashed uuid", "ivf_postings", 1, map[string]string{"location": "indexes/2f1c7f5e-3c43-4a44-8f2a-cf560c4db8d1/701/ivf_postings/"}},
		{"snapshot 0", "ivf_postings", 1, map[string]string{"location": "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/0-00000000000000aa/ivf_postings/"}},
		{"snapshot leading zero", "ivf_postings", 1, map[string]string{"location": "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/0701-00000000000000aa/ivf_postings/"}},
		{"no write id", "ivf_postings", 1, map[string]string{"location": "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/701/ivf_postings/"}},
		{"short write id", "ivf_postings", 1, map[string]string{"location": "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/701-00aa/ivf_postings/"}},
		{"upper-case write id", "ivf_postings", 1, map[string]string{"location": "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/701-00000000000000AA/ivf_postings/"}},
		{"centroids version 2", "ivf_centroids", 1, map[string]string{"location": "indexes/fe985f6d35924385a1ca71347057a210/2/ivf_centroids/"}},
		{"centroids uppercase", "ivf_centroids", 1, map[string]string{"location": "indexes/FE985F6D35924385A1CA71347057A210/1/ivf_centroids/"}},
		{"unknown role", "ivf_roots", 1, map[string]string{"location": good["ivf_centroids"]}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			if err := CheckIndexTable(c.role, c.version, c.props, idx); !errors.Is(err, ErrProperties) {
				t.Fatalf("got %v, want ErrProperties", err)
			}
		})
	}
}

func TestCheckSourceProperties(t *testing.T) {
	id := "sha256:" + strings.Repeat("ab", 32)
	for _, loc := range []string{"s3://bucket/docs/", "s3://bucket/docs/part-0.parquet", "/data/vectors.parquet", "/data/"} {
		props := map[string]string{"definition-version": "1", "location": loc, "table-identity": id}
		if err := CheckSourceProperties(props); err != nil {
			t.Fatalf("%s: %v", loc, err)
		}
	}
	props := map[string]string{"definition-version": "1", "location": "s3://bucket/docs/", "table-identity": id}
	for name, mut := range map[string]func(map[string]string){
		"version":        func(p map[string]string) { p["definition-version"] = "2" },
		"empty location": func(p map[string]string) { p["location"] = "" },
		"newline":        func(p map[string]string) { p["location"] = "s3://bucket/do\ncs/" },
		"identity":       func(p map[string]string) { p["table-identity"] = "s3://bucket/docs/" },
		"upper hex":      func(p map[string]string) { p["table-identity"] = "sha256:" + strings.Repeat("AB", 32) },
		"unknown prop":   func(p map[string]string) { p["secret"] = "x" },
	} {
		p := map[string]string{}
		for k, v := range props {
			p[k] = v
		}
		mut(p)
		if err := CheckSourceProperties(p); !errors.Is(err, ErrProperties) {
			t.Fatalf("%s: got %v", name, err)
		}
	}
}

func TestLayoutOf(t *testing.T) {
	const loc = "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/701-00000000000000aa/ivf_postings/"
	for _, c := range []struct {
		v    int32
		meta string
	}{
		{PostingsVersionInline, loc},
		{PostingsVersion, "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/701-00000000000000aa/_meta/"},
	} {
		l := LayoutOf(loc, c.v)
		if l.Table != loc || l.Meta != c.meta {
			t.Fatalf("version %d: %+v, want meta %s", c.v, l, c.meta)
		}
		if l.Manifest() != c.meta+ManifestName || l.SourceFiles() != c.meta+SourceFilesName || l.KeyRows() != c.meta+KeyRowsName {
			t.Fatalf("version %d: %s %s %s", c.v, l.Manifest(), l.SourceFiles(), l.KeyRows())
		}
		if strings.HasPrefix(l.Meta, l.Table) != (c.v == PostingsVersionInline) {
			t.Fatalf("version %d: side folder %s inside the table location %s", c.v, l.Meta, l.Table)
		}
	}
}

func TestIsInlineSideObject(t *testing.T) {
	for name, want := range map[string]bool{
		"manifest.json":       true,
		"source-files.json":   true,
		"key-rows.parquet":    true,
		"vectors.f32":         true,
		"calibration-3.json":  true,
		"calibration-03.json": false,
		"calibration-x.json":  false,
		"shard-000001-00000000000000aa/manifest.json":             true,
		"shard-000001-00000000000000aa/source-files.json":         true,
		"shard-000001-00000000000000aa/bucket-000000-000.parquet": false,
		"shard-000001-00000000000000aa/x/manifest.json":           false,
		"other/manifest.json":                                     false,
		"bucket-000000-000.parquet":                               false,
		"foreign.parquet":                                         false,
	} {
		if got := IsInlineSideObject(name); got != want {
			t.Errorf("IsInlineSideObject(%q) = %v, want %v", name, got, want)
		}
	}
}
