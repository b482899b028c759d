package calibrate

import (
	"testing"

	"github.com/parqdb/parqdb/postings"
)

// TestLocationKnownToLayout: postings.IsInlineSideObject, which cannot
// import this package, recognises a version-1 table's calibration files.
func TestLocationKnownToLayout(t *testing.T) {
	if name := Location("", 42); !postings.IsInlineSideObject(name) {
		t.Fatalf("postings.IsInlineSideObject(%q) = false", name)
	}
}
