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
	bad := []struct {
		name, role string
		version    int32
		props      map[string]string
	}{
		{"version 2", "ivf_postings", 2, map[string]string{"location": good["ivf_postings"]}},
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
