package main

import (
	"context"
	"errors"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/query"
)

// whereHelp is the --where flag's help, shared by search and bench.
const whereHelp = `only rows for which this SQL-like predicate on source columns is true, e.g. "price < 50 AND category IN ('shoes','boots')" (see docs/search.md)`

// parseWhere parses a --where predicate; a syntax error is a usage error.
// An empty text gives nil.
func parseWhere(text string) (*filter.Predicate, error) {
	if text == "" {
		return nil, nil
	}
	p, err := filter.Parse(text)
	if err != nil {
		return nil, usageError{err}
	}
	return p, nil
}

// prepareWhere computes the predicate's matching rows on ix up front, so
// that timed searches do not include it; an unknown column or a type
// mismatch is a usage error.
func prepareWhere(ctx context.Context, ix *query.Index, p *filter.Predicate) (query.FilterInfo, error) {
	if p == nil {
		return query.FilterInfo{}, nil
	}
	info, err := ix.Filter(ctx, p)
	if err != nil {
		var fe *filter.Error
		if errors.As(err, &fe) {
			return info, usageError{fe}
		}
		return info, err
	}
	return info, nil
}

// filterStats are the --stats fields of a filtered search.
type filterStats struct {
	Where            string  `json:"where,omitempty"`
	FilterRows       int64   `json:"filter_rows,omitempty"`    // source rows matching the predicate
	FilterSeconds    float64 `json:"filter_seconds,omitempty"` // computing the matching rows (once per index and predicate)
	RowGroupsSkipped int     `json:"filter_row_groups_skipped,omitempty"`
	PagesRead        int     `json:"filter_pages_read,omitempty"`    // data pages of the filter columns decoded
	PagesSkipped     int     `json:"filter_pages_skipped,omitempty"` // data pages skipped (or taken whole) by the page index
	FilterRejected   int64   `json:"filter_rejected,omitempty"`      // rows of the probed lists that do not match (skipped, not scored)
	FilterExact      int64   `json:"filter_exact_plans,omitempty"`   // queries answered by an exact scan of the matching rows
	FilterLists      int64   `json:"filter_list_plans,omitempty"`    // queries answered by the list plan
	FilterWidenings  int64   `json:"filter_widenings,omitempty"`     // extra routings over every root
}

func newFilterStats(p *filter.Predicate, info query.FilterInfo, st query.Stats) filterStats {
	if p == nil {
		return filterStats{}
	}
	return filterStats{
		Where: p.String(), FilterRows: info.Rows, FilterSeconds: info.Build.Seconds(),
		RowGroupsSkipped: info.RowGroupsSkipped, PagesRead: info.PagesRead, PagesSkipped: info.PagesSkipped, FilterRejected: st.FilterRejected,
		FilterExact: st.FilterExact, FilterLists: st.FilterLists, FilterWidenings: st.FilterWidenings,
	}
}
