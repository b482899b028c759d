package knnjoin_test

import (
	"testing"

	"github.com/parqdb/parqdb/filter"
)

func mustParse(t *testing.T, text string) *filter.Predicate {
	t.Helper()
	p, err := filter.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
