package serving_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/internal/errclass"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/server/serving"
)

// TestCode: Code gives the stable code and HTTP status of AsError, for
// front ends that map codes to their own statuses.
func TestCode(t *testing.T) {
	for _, tc := range []struct {
		err    error
		code   string
		status int
	}{
		{fmt.Errorf("load: %w", catalog.ErrNotFound), serving.CodeIndexNotFound, 404},
		{fmt.Errorf("read: %w", errclass.Corrupt("postings row group 3 CRC mismatch")), serving.CodeIndexCorrupt, 409},
		{fmt.Errorf("search: %w", context.DeadlineExceeded), serving.CodeTimeout, 408},
		{serving.Errorf(400, serving.CodeOutOfRange, "k = 0"), serving.CodeOutOfRange, 400},
		{errors.New("a bug"), serving.CodeInternal, 500},
	} {
		code, status := serving.Code(tc.err)
		if code != tc.code || status != tc.status {
			t.Errorf("Code(%v) = %q, %d, want %q, %d", tc.err, code, status, tc.code, tc.status)
		}
		if e := serving.AsError(tc.err); e.Code != code || e.Status != status {
			t.Errorf("AsError(%v) = %q, %d, Code says %q, %d", tc.err, e.Code, e.Status, code, status)
		}
	}
}

// TestFrontEndsDoNotImportHTTP: the SQL engine and Flight SQL share the
// serving core, not the HTTP front end (package server), in both builds.
func TestFrontEndsDoNotImportHTTP(t *testing.T) {
	for _, tags := range []string{"", "duckdb,duckdb_arrow"} {
		deps := testenv.Deps(t, tags, "../sqlengine", "../flightsql")
		if !slices.Contains(deps, "github.com/parqdb/parqdb/server/serving") {
			t.Fatalf("-tags %q: sqlengine and flightsql do not list serving: %v", tags, deps)
		}
		if slices.Contains(deps, "github.com/parqdb/parqdb/server") {
			t.Errorf("-tags %q: sqlengine or flightsql depends on package server", tags)
		}
	}
}
