package query

import (
	"errors"
	"fmt"
	"testing"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/internal/errclass"
	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
)

// TestStoredDataErr: an invalid definition Open read from the warehouse is
// of the corrupt class, keeping its own sentinel and message; a request's
// or the storage's error is not.
func TestStoredDataErr(t *testing.T) {
	for _, tc := range []struct {
		err     error
		sent    error
		corrupt bool
	}{
		{fmt.Errorf("roots: %w", location.ErrInvalid), location.ErrInvalid, true},
		{fmt.Errorf("t: %w", postings.ErrSchema), postings.ErrSchema, true},
		{fmt.Errorf("t: %w", postings.ErrProperties), postings.ErrProperties, true},
		{fmt.Errorf("m: %w", metadata.ErrInvalid), metadata.ErrInvalid, true},
		{fmt.Errorf("m: %w", postings.ErrCorrupt), postings.ErrCorrupt, true},
		{fmt.Errorf("ix: %w", catalog.ErrNotFound), catalog.ErrNotFound, false},
		{&storage.Error{Op: "read", Key: "k", Bucket: "b", Err: storage.ErrNotExist}, storage.ErrNotExist, false},
		{fmt.Errorf("q: %w", ErrBadQuery), ErrBadQuery, false},
	} {
		got := storedDataErr(tc.err)
		if errors.Is(got, errclass.ErrCorrupt) != tc.corrupt || !errors.Is(got, tc.sent) || got.Error() != tc.err.Error() {
			t.Errorf("storedDataErr(%v) = %v: corrupt %v, want %v (and the sentinel and message kept)", tc.err, got, errors.Is(got, errclass.ErrCorrupt), tc.corrupt)
		}
	}
}
