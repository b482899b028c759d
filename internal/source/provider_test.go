package source_test

import (
	"errors"
	"testing"

	"github.com/parqdb/parqdb/internal/source"
)

// TestProviderNotLinked: this test binary links no provider, so the
// iceberg provider ParqDB has is reported as not linked, naming the
// package that links it, by name and by location; the parquet provider
// and Parquet locations (local, s3://) are left to the caller.
func TestProviderNotLinked(t *testing.T) {
	const want = `provider "iceberg" is not linked into this binary; import _ "github.com/parqdb/parqdb/iceberg" (the parqdb CLI links it unless built with -tags noiceberg)`
	if _, err := source.Lookup("iceberg"); !errors.Is(err, source.ErrNotLinked) || err.Error() != want {
		t.Errorf("Lookup(iceberg): %v, want ErrNotLinked: %s", err, want)
	}
	if _, err := source.LookupLocation("iceberg://lake/docs/items"); !errors.Is(err, source.ErrNotLinked) || err.Error() != want {
		t.Errorf("LookupLocation(iceberg://…): %v, want ErrNotLinked: %s", err, want)
	}
	for _, name := range []string{"parquet", "delta", ""} {
		if p, err := source.Lookup(name); p != nil || err != nil {
			t.Errorf("Lookup(%q) = %v, %v, want nil, nil", name, p, err)
		}
	}
	for _, loc := range []string{"/data/src/", "s3://bucket/src/", "file.parquet", "icebergs/x"} {
		if p, err := source.LookupLocation(loc); p != nil || err != nil {
			t.Errorf("LookupLocation(%q) = %v, %v, want nil, nil", loc, p, err)
		}
	}
	if got := source.Providers(); len(got) != 0 {
		t.Errorf("Providers() = %v in a binary that links none", got)
	}
}
