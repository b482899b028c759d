package query_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/query"
)

func TestKeyTextsJSON(t *testing.T) {
	for in, want := range map[string]string{
		`","`:              ",",
		`"a,b"`:            "a,b",
		`[","]`:            ",",
		`["king", 692]`:    "king|692",
		`[true, -1.5e3]`:   "true|-1.5e3",
		` 12 `:             "12",
		`["", "x\u00e9y"]`: "|xéy",
	} {
		got, err := query.KeyTextsJSON([]byte(in))
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("%s: got %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{``, `[]`, `[1`, `{"a": 1}`, `[null]`, `[[1]]`, `1 2`} {
		if _, err := query.KeyTextsJSON([]byte(in)); !errors.Is(err, query.ErrBadQuery) {
			t.Errorf("%q: err %v, want ErrBadQuery", in, err)
		}
	}
}
