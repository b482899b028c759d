//go:build duckdb

package sqlengine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/server/serving"
)

// TestNumericBoundaries gives k, nprobe, refine and snapshot at the edges
// of their ranges and of BIGINT: past the maximum is out_of_range (never
// a narrowed value that lands in range: 2^32 + 3 is not k 3), past BIGINT
// a SQL error, and the error names the argument.
func TestNumericBoundaries(t *testing.T) {
	e, _ := newEngine(t)
	for _, tc := range []struct {
		arg, value, code string
	}{
		{"k", "9223372036854775807", serving.CodeOutOfRange},
		{"k", "-9223372036854775808", serving.CodeOutOfRange},
		{"k", "4294967299", serving.CodeOutOfRange},
		{"k", "9223372036854775808", serving.CodeSQLError},
		{"nprobe", "9223372036854775807", serving.CodeOutOfRange},
		{"nprobe", "-9223372036854775808", serving.CodeOutOfRange},
		{"nprobe", "4294967297", serving.CodeOutOfRange},
		{"refine", "9223372036854775807", serving.CodeOutOfRange},
		{"refine", "-9223372036854775808", serving.CodeOutOfRange},
		{"snapshot", "-1", serving.CodeInvalidArgument},
		{"snapshot", "-9223372036854775808", serving.CodeInvalidArgument},
		{"snapshot", "9223372036854775807", serving.CodeSnapshotNotFound},
		{"snapshot", "9223372036854775808", serving.CodeSQLError},
	} {
		t.Run(tc.arg+"="+tc.value, func(t *testing.T) {
			stmt := "SELECT * FROM ivf_search_key('words', 'king', 5, " + tc.arg + " := " + tc.value + ")"
			if tc.arg == "k" {
				stmt = "SELECT * FROM ivf_search_key('words', 'king', " + tc.value + ")"
			}
			err := queryErr(e, stmt)
			var ae *serving.Error
			if !errors.As(err, &ae) || ae.Code != tc.code {
				t.Fatalf("%s: got %v, want code %s", stmt, err, tc.code)
			}
			if tc.code != serving.CodeSQLError && tc.code != serving.CodeSnapshotNotFound && !strings.Contains(ae.Message, tc.arg) {
				t.Errorf("message %q does not name %s", ae.Message, tc.arg)
			}
		})
	}
}

// TestNullQueryVectorElement: a null element of query_vector (JSON text)
// is invalid_argument naming its place, not a 0.
func TestNullQueryVectorElement(t *testing.T) {
	e, ix := newEngine(t)
	vec := make([]float32, ix.Dim())
	vec[0] = 1
	text := vectorText(vec)
	for _, tc := range []struct{ vec, msg string }{
		{"[null" + text[strings.IndexByte(text, ','):], "query_vector[0] is null"},
		{text[:strings.LastIndexByte(text, ',')] + ", null]", fmt.Sprintf("query_vector[%d] is null", ix.Dim()-1)},
	} {
		for _, fn := range []string{"ivf_search", "ivf_search_where"} {
			stmt := "SELECT * FROM " + fn + "('words', '" + tc.vec + "', 5)"
			if fn == "ivf_search_where" {
				stmt = "SELECT * FROM " + fn + "('words', '" + tc.vec + "', 5, 'rank > 1')"
			}
			err := queryErr(e, stmt)
			var ae *serving.Error
			if !errors.As(err, &ae) || ae.Code != serving.CodeInvalidArgument || !strings.Contains(ae.Message, tc.msg) {
				t.Errorf("%s: got %v, want invalid_argument with %q", fn, err, tc.msg)
			}
		}
	}
}
