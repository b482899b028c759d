package verify

import (
	"context"
	"testing"

	"github.com/parqdb/parqdb/internal/testfix"
)

// TestV1LayoutVerifies: an index written before the postings table's
// definition version 2 (its manifest and side objects inside the table
// location; testdata/v1-layout of internal/testfix) passes every check,
// its vectors file included: the side objects a version-1 table keeps in
// its location are not foreign objects.
func TestV1LayoutVerifies(t *testing.T) {
	ctx := context.Background()
	wh, cat := testfix.OpenV1Layout(t)
	rep, err := Run(ctx, Env{Warehouse: wh, Catalog: cat}, "v1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("verify of a version-1 index: %+v", rep.Failed())
	}
	for _, c := range rep.Checks {
		if c.Name == CheckVectorsFile && c.Status != StatusOK {
			t.Fatalf("%s: %s %s, want ok (the version-1 table has one)", c.Name, c.Status, c.Detail)
		}
	}
}
